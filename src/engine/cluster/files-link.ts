// Files of a session another node runs (issue 23): the node a caller reached asks the owner over
// the node link (node-link.ts `call`), `/internal/v1/sessions/<id>/files/(list|read|write)`, routes
// of the link's one signed table (node-routes.ts), and streams the bytes through as they come
// (never held whole on either node). The signature covers the method, the path with its query
// (the file's name, kind and caps) and the time; the body of a write is the file itself and is not
// signed (decisions.md 55). The caller's rights and the plan were checked where the request
// arrived; the owner only reads or writes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough, pipeline, type Readable } from 'node:stream';
import { FILE_KINDS, type FileKind, type SessionFileEntry } from '../../protocol/files.js';
import { FileRefusal, type UploadCaps } from '../runtime/index.js';
import type { FilesAt } from '../sessions/files.js';
import { sendJson } from '../http/respond.js';
import type { NodeLink } from './node-link.js';
import type { NodeRoute } from './node-routes.js';

export interface FilesLinkOptions {
  /** The node link: its signed calls out. */
  link: Pick<NodeLink, 'call'>;
  /** The files of a session this node runs. */
  filesHere(sessionId: string): FilesAt | undefined;
}

type Refused = { status: 'refused'; reason: FileRefusal['reason']; message: string };

export class FilesLink {
  constructor(private readonly options: FilesLinkOptions) {}

  /** The files of a session `nodeId` runs, as if they were here. */
  at(nodeId: string, sessionId: string): FilesAt {
    const call = (op: string, query: Record<string, string>, method: 'GET' | 'POST', body?: Readable): Promise<IncomingMessage> =>
      this.options.link.call(nodeId, method, `/internal/v1/sessions/${sessionId}/files/${op}?${new URLSearchParams(query).toString()}`, body);
    const json = async (answer: IncomingMessage): Promise<Record<string, unknown>> => {
      const chunks: Buffer[] = [];
      for await (const chunk of answer) chunks.push(chunk as Buffer);
      const value = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      if (value.status === 'refused') throw new FileRefusal((value as Refused).reason, (value as Refused).message);
      if (value.status !== 'ok') throw new Error(String(value.message ?? 'the node that runs this session refused'));
      return value;
    };
    return {
      list: async (kinds = FILE_KINDS) => (await json(await call('list', { kinds: kinds.join(',') }, 'GET'))).files as SessionFileEntry[],
      read: async (kind, name) => {
        const answer = await call('read', { kind, name }, 'GET');
        if (answer.headers['content-type']?.startsWith('application/json')) {
          await json(answer);
          throw new Error('the node that runs this session sent no file');
        }
        const size = Number(answer.headers['x-rbk-size']);
        const stream = new PassThrough({ highWaterMark: 64 * 1024 });
        pipeline(answer, stream, () => undefined);
        return { size, stream, cancel: () => answer.destroy() };
      },
      // The body goes on without its length (chunked): the length it announced travels in the signed query.
      write: async (name, body, caps, announced = null) =>
        Number((await json(await call('write', { name, file: String(caps.maxFileBytes), session: String(caps.maxSessionBytes), ...(announced !== null ? { length: String(announced) } : {}) }, 'POST', body))).size),
    };
  }

  /** Its routes on the node link (node-routes.ts, which checks each call's signature): the owner's side of `at`. */
  get routes(): NodeRoute[] {
    const serve = (answer: (files: FilesAt, query: URLSearchParams, request: IncomingMessage, response: ServerResponse) => Promise<void>): NodeRoute['answer'] =>
      async ({ id, url, request }, response) => {
        const files = this.options.filesHere(id);
        if (!files) {
          request.resume();
          return sendJson(response, { status: 'denied', message: 'the session does not run on this node' });
        }
        try {
          await answer(files, url.searchParams, request, response);
        } catch (error) {
          request.resume();
          if (error instanceof FileRefusal) sendJson(response, { status: 'refused', reason: error.reason, message: error.message } satisfies Refused);
          else sendJson(response, { status: 'error', message: (error as Error).message });
        }
      };
    return [
      {
        method: 'GET', path: 'sessions/:id/files/list', body: 'none',
        answer: serve(async (files, query, _request, response) => {
          const kinds = (query.get('kinds') ?? '').split(',').filter((k): k is FileKind => FILE_KINDS.includes(k as FileKind));
          sendJson(response, { status: 'ok', files: await files.list(kinds) });
        }),
      },
      {
        method: 'GET', path: 'sessions/:id/files/read', body: 'none',
        answer: serve(async (files, query, _request, response) => {
          const read = await files.read(query.get('kind') as FileKind, query.get('name') ?? '');
          response.writeHead(200, { 'content-type': 'application/octet-stream', 'x-rbk-size': String(read.size), 'content-length': String(read.size) });
          pipeline(read.stream, response, (error) => {
            if (error) read.cancel();
          });
        }),
      },
      {
        method: 'POST', path: 'sessions/:id/files/write', body: 'stream',
        answer: serve(async (files, query, request, response) => {
          const caps: UploadCaps = { maxFileBytes: Number(query.get('file')), maxSessionBytes: Number(query.get('session')) };
          const length = query.get('length');
          sendJson(response, { status: 'ok', size: await files.write(query.get('name') ?? '', request, caps, length === null ? null : Number(length)) });
        }),
      },
    ];
  }
}
