// The proxy route's file endpoints (issue 23): a signed-in user's own sessions only, reached by
// their handles. `GET <base>/sessions/:handle/files` lists the session's files,
// `GET .../files/download?name=` streams one as a download with its own name, and
// `POST .../files/upload?name=` streams the request body into the session's uploads folder. The
// bytes pass through as they come: the route never holds a file whole.
import { SECURITY_HEADERS } from '../http/headers.js';
import { attachmentDisposition, fileNameProblem } from '../protocol/files.js';
import type { RemoteBrowserService } from './remote-browser-service.js';

export type FilesEndpoint = 'files' | 'download' | 'upload';

/** `files`, `files/download`, `files/upload` after a session's handle, with the method each takes. */
export function filesEndpointOf(tail: string | undefined): { name: FilesEndpoint; method: string } | null {
  if (tail === 'files') return { name: 'files', method: 'GET' };
  if (tail === 'files/download') return { name: 'download', method: 'GET' };
  if (tail === 'files/upload') return { name: 'upload', method: 'POST' };
  return null;
}

/** Serves one file endpoint for a session the user owns (its vmId already opened from the handle). */
export async function serveFiles(
  service: RemoteBrowserService,
  endpoint: FilesEndpoint,
  vmId: string,
  request: Request,
  reply: (body: unknown, status?: number) => Response,
): Promise<Response> {
  if (!service.files || !service.downloadFile || !service.uploadFile) {
    return reply({ status: 'denied', message: 'this service client moves no files: use createServiceClient() from remote-browser-kit/server' }, 501);
  }
  const signal = request.signal;
  if (endpoint === 'files') return reply({ status: 'ok', files: await service.files(vmId, { signal }) });
  const name = new URL(request.url).searchParams.get('name');
  const problem = fileNameProblem(name);
  if (problem) return reply({ status: 'denied', message: problem }, 400);
  if (endpoint === 'upload') {
    if (!request.body) return reply({ status: 'denied', message: 'body: send the file as the request body' }, 400);
    return reply(await service.uploadFile(vmId, name!, request.body, { signal }));
  }
  const file = await service.downloadFile(vmId, name!, { signal });
  return new Response(file.body, {
    status: 200,
    headers: {
      ...SECURITY_HEADERS,
      'content-type': 'application/octet-stream',
      'content-length': String(file.size),
      'content-disposition': attachmentDisposition(file.name),
      'cache-control': 'no-store',
    },
  });
}
