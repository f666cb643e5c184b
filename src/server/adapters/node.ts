// node:http adapter (Express uses it too): IncomingMessage in, the route's Response streamed out
// with back-pressure; capped bodies, bodies express.json() already parsed, abort on disconnect.
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { JSON_CONTENT_TYPE } from '../../http/headers.js';
import { readNodeBody } from '../../http/node-body.js';
import { BODY_MAX_BYTES } from '../../protocol/index.js';
import { isUnderBasePath, type ProxyRoute } from '../proxy-route.js';

export type NodeRequest = IncomingMessage & { body?: unknown; originalUrl?: string };
export type NodeHandler = (req: NodeRequest, res: ServerResponse, next?: (error?: unknown) => void) => Promise<void>;

const first = (value: string | string[] | undefined) => String(value ?? '').split(',')[0]!.trim();

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
      if (body && 'message' in body) return void res.writeHead(413, { 'content-type': JSON_CONTENT_TYPE, connection: 'close' }).end(JSON.stringify({ status: 'denied', message: body.message }));
      if (req.body !== undefined) headers.delete('content-length');
      // A proxy in front says which scheme and host the browser used; the origin check needs them.
      const origin = `${first(req.headers['x-forwarded-proto']) || ((req.socket as TLSSocket).encrypted ? 'https' : 'http')}://${first(req.headers['x-forwarded-host']) || req.headers.host || 'localhost'}`;
      const response = await route(new Request(new URL(path, origin), { method: req.method ?? 'GET', headers, ...(body ? { body } : {}), signal: aborted.signal }));
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
      if (!res.headersSent) res.writeHead(500, { 'content-type': JSON_CONTENT_TYPE }).end(JSON.stringify({ status: 'error', message: 'something went wrong on this server; try again later' }));
      else res.destroy();
    }
  };
}
