// v8's calls for who drives a session (issue 36, decisions.md 101), for its account's server (the
// proxy route carries them for the owner): `POST /v8/vm/control {id, action, to?, mode?}` takes
// control back, gives it, releases it or changes the mode; `POST /v8/vm/viewer {id, name?}` makes
// a viewer pass that names the owner's viewer (its `hello`). Authentication, the rate limit and
// programmatic access as for vm/remove; an unknown or another account's id is `denied` alike.
// Routes of the API's table (http/routes.ts) that the control module gives.
import { parseControlAction, VIEWER_NAME_MAX, type ControlAction, type ControlAnswer } from '../../../protocol/index.js';
import { answer, type ApiAnswer } from '../../http/calls.js';
import { isAccount, V8_ONLY, type ApiRoute } from '../../http/routes.js';
import type { SessionRow } from '../../store/store.js';

/** What the engine does with `vm/control` and `vm/viewer` (node-control.ts `calls`): on the node that runs the session (forwarded there in a cluster). */
export interface SessionControl {
  act(row: SessionRow, action: ControlAction): Promise<ControlAnswer | { status: 'denied' | 'error'; message: string }>;
  pass(row: SessionRow, name: string | undefined): { pass: string; expires: number };
}

/** A call on one running session of the caller's: the key, the body's `id`, then `act`. */
function onRunningSession(control: SessionControl, act: (control: SessionControl, row: SessionRow, body: Record<string, unknown>) => Promise<ApiAnswer> | ApiAnswer): ApiRoute['answer'] {
  return async (request, _version, { programmatic, ownSession }) => {
    const account = await programmatic(request);
    if (!isAccount(account)) return account;
    const body = await request.body();
    if (!body.ok) return answer({ status: 'denied', message: body.message });
    const value = (typeof body.value === 'object' && body.value !== null && !Array.isArray(body.value) ? body.value : {}) as Record<string, unknown>;
    const id = typeof value.id === 'string' ? value.id : null;
    if (id === null || id === '') return answer({ status: 'denied', message: 'id: required; must be the vmId returned by vm/create' });
    const row = await ownSession(account, id, 'v8');
    if ('message' in row) return answer(row);
    if (row.status !== 'running' && row.status !== 'starting') return answer({ status: 'denied', message: `id: the session is ${row.status}; control is handed over only while it runs` });
    return act(control, row, value);
  };
}

export function controlApiRoutes(control: SessionControl): ApiRoute[] {
  return [
    {
      method: 'POST', path: 'vm/control', versions: V8_ONLY,
      answer: onRunningSession(control, async (control, row, value) => {
        const action = parseControlAction(value);
        if (!action.ok) return answer({ status: 'denied', message: action.message });
        return answer(await control.act(row, action.value));
      }),
    },
    {
      method: 'POST', path: 'vm/viewer', versions: V8_ONLY,
      answer: onRunningSession(control, (control, row, value) => {
        if (value.name !== undefined && (typeof value.name !== 'string' || value.name.trim() === '' || value.name.length > VIEWER_NAME_MAX)) {
          return answer({ status: 'denied', message: `name: must be a display name of 1 to ${VIEWER_NAME_MAX} characters` });
        }
        const name = typeof value.name === 'string' ? value.name.trim() : undefined;
        return answer({ status: 'ok', ...control.pass(row, name) });
      }),
    },
  ];
}
