// The interface's file calls on a session (decisions.md 55): `vm/files` lists here; the bytes of
// `vm/files/download` and `vm/files/upload` stream over node:http (files.ts, a route's `stream`),
// so in-process they are refused with the reason.
import { answer } from './calls.js';
import { receiveSessionFile, sendSessionFile } from './files.js';
import { BOTH, isAccount, type ApiRoute } from './routes.js';

const inProcess = (path: string): ApiRoute['answer'] => async () => answer({ status: 'denied', message: `${path} streams its bytes: call it over HTTP, not in-process` });

/** The key, its rate limit and the plan checked as for any call, then the bytes streamed. */
const transfer = (direction: 'download' | 'upload'): NonNullable<ApiRoute['stream']> => async ({ request, response, api, version, refuse }, { options: { files }, programmatic, ownSession }) => {
  const account = await programmatic(api);
  if (!isAccount(account)) return refuse(account);
  const row = await ownSession(account, api.url.searchParams.get('id'), version);
  if ('message' in row) return refuse(answer(row, direction === 'download' ? 403 : 200));
  if (!files) return refuse(answer({ status: 'denied', message: 'files cannot be moved on this service' }, 403));
  return direction === 'download' ? sendSessionFile(request, response, row, api.url, files) : receiveSessionFile(request, response, row, api.url, files);
};

export const FILE_ROUTES: readonly ApiRoute[] = [
  {
    method: 'GET', path: 'vm/files', versions: BOTH,
    answer(request, version, { options: { files }, read, ownSession }) {
      const id = request.url.searchParams.get('id');
      return read(request, true, async (account) => {
        const row = await ownSession(account, id, version);
        if ('message' in row) return row;
        return files ? files.files.list(row) : { status: 'denied', message: 'files cannot be moved on this service' };
      });
    },
  },
  { method: 'GET', path: 'vm/files/download', versions: BOTH, answer: inProcess('vm/files/download'), stream: transfer('download') },
  { method: 'POST', path: 'vm/files/upload', versions: BOTH, answer: inProcess('vm/files/upload'), stream: transfer('upload') },
];
