// node:http adapter (Express uses it too): IncomingMessage in, the route's Response streamed out
// with back-pressure; capped bodies, bodies express.json() already parsed, abort on disconnect.
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { JSON_CONTENT_TYPE, SECURITY_HEADERS } from '../../http/headers.js';
import { readNodeBody } from '../../http/node-body.js';
import { requestTargetUrl } from '../../http/request-target.js';
import { BODY_MAX_BYTES } from '../../protocol/index.js';
import { isUnderBasePath, type ProxyRoute } from '../proxy-route.js';

export type NodeRequest = IncomingMessage & { body?: unknown; originalUrl?: string };
export type NodeHandler = (req: NodeRequest, res: ServerResponse, next?: (error?: unknown) => void) => Promise<void>;

const first = (value: string | string[] | undefined) => String(value ?? '').split(',')[0]!.trim();

/** The adapter's own answers, in the route's envelope and with its headers. */
function answer(res: ServerResponse, status: number, body: { status: 'denied' | 'error'; message: string }, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': JSON_CONTENT_TYPE, ...headers }).end(JSON.stringify(body));
}

/**
 * The URL the browser asked for. A proxy in front says which scheme and host it used (the origin
 * check needs them); a scheme other than http or https, or a host that is no host, is not taken.
 */
function requestUrl(req: NodeRequest, path: string): URL | null {
  const encrypted = (req.socket as TLSSocket).encrypted === true;
  const proto = first(req.headers['x-forwarded-proto']).toLowerCase();
  const scheme = proto === 'http' || proto === 'https' ? proto : encrypted ? 'https' : 'http';
  let origin = `${scheme}://localhost`;
  try {
    origin = new URL(`${scheme}://${first(req.headers['x-forwarded-host']) || req.headers.host || 'localhost'}`).origin;
  } catch {
    /* not a host: this server's own name */
  }
  return requestTargetUrl(path, origin);
}

/** The body's bytes, or the refusal past the cap (the refused body is read to its end first). */
async function readBody(req: NodeRequest, limit: number): Promise<Uint8Array<ArrayBuffer> | { message: string }> {
  // express.json() (or .text(), .raw()) consumed the stream: send on what it parsed.
  if (req.body !== undefined) return Buffer.isBuffer(req.body) ? new Uint8Array(req.body) : Buffer.from(typeof req.body === 'string' ? req.body : JSON.stringify(req.body));
  const read = await readNodeBody(req, limit);
  if (read.ok) return Buffer.concat(read.chunks);
  if (read.refusal === 'unreadable') throw read.cause ?? new Error(read.message);
  return read;
}

/** `(req, res, next?)`: given `next` (Express), requests outside the route's base path go on. */
export function toNodeHandler(route: ProxyRoute, options: { maxBodyBytes?: number } = {}): NodeHandler {
  const limit = options.maxBodyBytes ?? BODY_MAX_BYTES;
  return async (req, res, next) => {
    const path = req.originalUrl ?? req.url ?? '/';
    if (next && !isUnderBasePath(path, route.basePath)) return next();
    const aborted = new AbortController();
    res.once('close', () => res.writableFinished || aborted.abort());
    try {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) [value ?? []].flat().forEach((item) => name.startsWith(':') || headers.append(name, item));
      const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await readBody(req, limit);
      if (body && 'message' in body) return void answer(res, 413, { status: 'denied', message: body.message }, { connection: 'close' });
      if (req.body !== undefined) headers.delete('content-length');
      const url = requestUrl(req, path);
      if (!url) return void answer(res, 404, { status: 'denied', message: `no endpoint ${req.method} ${path.slice(0, 100)}` });
      const response = await route(new Request(url, { method: req.method ?? 'GET', headers, ...(body ? { body } : {}), signal: aborted.signal }));
      res.statusCode = response.status;
      response.headers.forEach((value, name) => name === 'set-cookie' || res.setHeader(name, value));
      if (response.headers.has('set-cookie')) res.setHeader('set-cookie', response.headers.getSetCookie());
      const reader = response.body?.getReader();
      for (let part = await reader?.read(); reader && part && !part.done; part = await reader.read()) {
        if (!res.write(part.value)) await once(res, 'drain', { signal: aborted.signal }).catch(() => reader.cancel());
        if (aborted.signal.aborted) return;
      }
      res.end();
    } catch (error) {
      if (next) return next(error);
      if (!res.headersSent) answer(res, 500, { status: 'error', message: 'something went wrong on this server; try again later' });
      else res.destroy();
    }
  };
}
