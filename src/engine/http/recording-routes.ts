// The interface's calls on a session's recording (issue 35, decisions.md 96, 110), v8 only:
// `vm/recording` (what it holds), `vm/recording/remove`, `vm/recording/link` (a signed, expiring
// replay link); its media streams over node:http (api.ts, recordings.ts).
import { parseRecordingLinkRequest } from '../../protocol/index.js';
import { answer } from './calls.js';
import { isAccount, V8_ONLY, type ApiRoute } from './routes.js';

const notRecorded = { status: 'denied', message: 'sessions are not recorded on this service' };

export const RECORDING_ROUTES: readonly ApiRoute[] = [
  {
    method: 'GET', path: 'vm/recording', versions: V8_ONLY,
    answer(request, version, { options: { recordings }, read, ownSession }) {
      const id = request.url.searchParams.get('id');
      return read(request, true, async (account) => {
        const row = await ownSession(account, id, version);
        if ('message' in row) return row;
        return recordings ? recordings.read(row) : notRecorded;
      });
    },
  },
  {
    method: 'POST', path: 'vm/recording/remove', versions: V8_ONLY,
    answer: (request, version, { options: { recordings }, sessionByBody, ownSession }) =>
      sessionByBody(request, async (account, id) => {
        const row = await ownSession(account, id, version);
        if ('message' in row) return answer(row);
        return answer(recordings ? await recordings.remove(row) : notRecorded);
      }),
  },
  {
    method: 'POST', path: 'vm/recording/link', versions: V8_ONLY,
    async answer(request, version, { options: { replayLinks }, programmatic, ownSession }) {
      const account = await programmatic(request);
      if (!isAccount(account)) return account;
      const body = await request.body();
      const parsed = body.ok ? parseRecordingLinkRequest(body.value) : body;
      if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
      const row = await ownSession(account, parsed.value.id, version);
      if ('message' in row) return answer(row);
      return answer(replayLinks ? await replayLinks.mint(row, parsed.value.expires_in_s) : notRecorded);
    },
  },
];
