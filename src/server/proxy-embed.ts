// The proxy route's framing call (issue 44, decisions.md 134): `GET <base>/embed` reads and
// `POST <base>/embed {"origins": [...]}` sets the origins that may frame the account's share
// links, for the users `policy.embed` allows (nobody by default: the list is the whole account's).
// The list is checked here with the service's own words before it goes on.
import { parseEmbedRequest } from '../protocol/index.js';
import { readJsonObject } from './proxy-body.js';
import type { RemoteBrowserService } from './remote-browser-service.js';

type Reply = (body: unknown, status?: number) => Response;

export async function serveEmbed(service: RemoteBrowserService, request: Request, allowed: boolean | undefined, reply: Reply): Promise<Response> {
  const refused = (status: number, message: string) => reply({ status: 'denied', message }, status);
  if (!allowed) return refused(403, 'the framing origins are not shared with you');
  if (!service.embedOrigins || !service.setEmbedOrigins) return refused(501, 'framing share links is not offered by this service');
  if (request.method.toUpperCase() === 'GET') return reply({ status: 'ok', origins: await service.embedOrigins({ signal: request.signal }) });
  const body = await readJsonObject(request);
  if (!body.ok) return refused(body.status, body.message);
  const parsed = parseEmbedRequest(body.value);
  if (!parsed.ok) return refused(400, parsed.message);
  return reply({ status: 'ok', origins: await service.setEmbedOrigins(parsed.value.origins, { signal: request.signal }) });
}
