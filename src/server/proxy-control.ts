// The proxy route's calls on who drives a session (issue 36, decisions.md 99-101), for the user the
// session's handle is sealed to (its owner): `POST <base>/sessions/:handle/control` (take, give,
// release, mode) and `POST <base>/sessions/:handle/viewer` (a pass naming the owner's viewer with
// the name the customer's server gives, `policy.viewerName`; never one the browser sends).
import { parseControlAction, VIEWER_NAME_MAX } from '../protocol/index.js';
import { readJsonObject } from './proxy-body.js';
import type { RemoteBrowserService } from './remote-browser-service.js';

type Reply = (body: unknown, status?: number) => Response;

export async function serveControl(service: RemoteBrowserService, endpoint: 'control' | 'viewer', vmId: string, request: Request, viewerName: () => Promise<string | null | undefined>, reply: Reply): Promise<Response> {
  const refused = (status: number, message: string) => reply({ status: 'denied', message }, status);
  if (!service.control || !service.viewerPass) return refused(501, 'handing over control is not offered by this service');
  if (endpoint === 'viewer') {
    const name = (await viewerName())?.trim().slice(0, VIEWER_NAME_MAX) || undefined;
    return reply(await service.viewerPass(vmId, name, { signal: request.signal }));
  }
  const body = await readJsonObject(request);
  if (!body.ok) return refused(body.status, body.message);
  const action = parseControlAction(body.value);
  if (!action.ok) return refused(400, action.message);
  return reply(await service.control(vmId, action.value, { signal: request.signal }));
}
