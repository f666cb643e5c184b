// v8's calls for who drives a session (issue 36, decisions.md 101), for its account's server (the
// proxy route carries them for the owner): `POST /v8/vm/control {id, action, to?, mode?}` takes
// control back, gives it, releases it or changes the mode; `POST /v8/vm/viewer {id, name?}` makes
// a viewer pass that names the owner's viewer (its `hello`). Authentication, the rate limit and
// programmatic access as for vm/remove; an unknown or another account's id is `denied` alike.
import { parseControlAction, VIEWER_NAME_MAX, type ControlAction, type ControlAnswer } from '../../protocol/index.js';
import type { AccountRow, SessionRow } from '../store/store.js';
import { answer, type ApiAnswer, type ApiRequest } from './calls.js';

/** The routes this file answers (after `/v8/`). */
export const CONTROL_ROUTES = new Set(['POST vm/control', 'POST vm/viewer']);

/** What the engine does with them: on the node that runs the session (forwarded there in a cluster). */
export interface SessionControl {
  act(row: SessionRow, action: ControlAction): Promise<ControlAnswer | { status: 'denied' | 'error'; message: string }>;
  pass(row: SessionRow, name: string | undefined): { pass: string; expires: number };
}

export interface ControlCallHelpers {
  programmatic(request: ApiRequest): Promise<AccountRow | ApiAnswer>;
  ownSession(account: AccountRow, id: string | null, version: string): Promise<SessionRow | { status: 'denied'; message: string }>;
  control: SessionControl | undefined;
}

export async function answerControlCall(route: string, request: ApiRequest, helpers: ControlCallHelpers): Promise<ApiAnswer> {
  const account = await helpers.programmatic(request);
  if ('body' in account && 'status' in account) return account;
  const body = await request.body();
  if (!body.ok) return answer({ status: 'denied', message: body.message });
  const value = (typeof body.value === 'object' && body.value !== null && !Array.isArray(body.value) ? body.value : {}) as Record<string, unknown>;
  const id = typeof value.id === 'string' ? value.id : null;
  if (id === null || id === '') return answer({ status: 'denied', message: 'id: required; must be the vmId returned by vm/create' });
  const row = await helpers.ownSession(account as AccountRow, id, 'v8');
  if ('message' in row) return answer(row);
  if (!helpers.control) return answer({ status: 'denied', message: 'control cannot be handed over on this service' });
  if (row.status !== 'running' && row.status !== 'starting') return answer({ status: 'denied', message: `id: the session is ${row.status}; control is handed over only while it runs` });
  if (route === 'POST vm/viewer') {
    if (value.name !== undefined && (typeof value.name !== 'string' || value.name.trim() === '' || value.name.length > VIEWER_NAME_MAX)) {
      return answer({ status: 'denied', message: `name: must be a display name of 1 to ${VIEWER_NAME_MAX} characters` });
    }
    const name = typeof value.name === 'string' ? value.name.trim() : undefined;
    return answer({ status: 'ok', ...helpers.control.pass(row, name) });
  }
  const action = parseControlAction(value);
  if (!action.ok) return answer({ status: 'denied', message: action.message });
  return answer(await helpers.control.act(row, action.value));
}
