// A controlling viewer's side of a session's files (issue 23), without React and without touching
// the DOM at import: the files channel followed (its list as it changes, reconnected after a
// drop), where a file is saved from (a real download with its own name), and an upload with its
// progress (XMLHttpRequest: fetch reports no upload progress).
import { parseFilesChannelMessage, type FilesChannelMessage } from '../protocol/files.js';
import { shareApiPath } from '../protocol/share-api.js';
import { followShareChannel } from './share-channel.js';

export type { FilesChannelMessage };

/** Where the viewer's browser saves a file of the session from (`Content-Disposition: attachment`). */
export function sessionFileUrl(shareBase: string, linkId: string, name: string): string {
  return `${shareBase}${shareApiPath(linkId, 'files/download')}?name=${encodeURIComponent(name)}`;
}

/**
 * Follows the session's files: `onList` with every list the engine sends (JSON text, or the same
 * as bytes through another node). A dropped connection is made again after `retryMs`; a refusal
 * (a view-only link, 403 before the socket opens) or `stop()` ends it for good.
 */
export function followSessionFiles(shareBase: string, linkId: string, onList: (message: FilesChannelMessage) => void, retryMs = 2000): () => void {
  return followShareChannel(shareBase, linkId, 'files', { parse: parseFilesChannelMessage, onMessage: onList, retryMs }).stop;
}

export type UploadOutcome = { ok: true; size: number } | { ok: false; message: string };

/** Gives `file` to the session (its uploads folder); `onProgress` with the share of it sent (0 to 1). */
export function uploadToSession(shareBase: string, linkId: string, file: Blob, name: string, onProgress: (sent: number) => void): Promise<UploadOutcome> {
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open('POST', `${shareBase}${shareApiPath(linkId, 'files/upload')}?name=${encodeURIComponent(name)}`);
    request.setRequestHeader('content-type', 'application/octet-stream');
    request.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      let body: { status?: string; size?: number; message?: string } = {};
      try {
        body = JSON.parse(request.responseText) as typeof body;
      } catch {
        body = { message: `HTTP ${request.status}` };
      }
      resolve(body.status === 'ok' ? { ok: true, size: body.size ?? file.size } : { ok: false, message: body.message ?? `HTTP ${request.status}` });
    };
    request.onerror = () => resolve({ ok: false, message: 'the connection failed' });
    request.send(file);
  });
}
