// The interface's file calls on a session (decisions.md 55): `vm/files` lists here; the bytes of
// `vm/files/download` and `vm/files/upload` stream over node:http (api.ts, files.ts), so in-process
// they are refused with the reason.
import { answer } from './calls.js';
import { BOTH, type ApiRoute } from './routes.js';

const streams = (path: string): ApiRoute['answer'] => async () => answer({ status: 'denied', message: `${path} streams its bytes: call it over HTTP, not in-process` });

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
  { method: 'GET', path: 'vm/files/download', versions: BOTH, answer: streams('vm/files/download') },
  { method: 'POST', path: 'vm/files/upload', versions: BOTH, answer: streams('vm/files/upload') },
];
