// The HTTP interface as a Web-standard handler, `(Request) => Promise<Response>`: the engine
// in-process without a socket (the proxy route's in-process service calls it).
import { randomBytes } from 'node:crypto';
import { JSON_CONTENT_TYPE, SECURITY_HEADERS } from '../../http/headers.js';
import { readJsonRequest } from '../../http/json-body.js';
import type { Logger } from '../operations/logger.js';
import type { EngineMetrics } from '../operations/metrics.js';
import type { Api } from './api.js';
import type { ApiAnswer, ApiRequest } from './calls.js';
import { serviceFailure } from './failure.js';
import { requestFailed } from './public-port.js';

/** Paths whose bytes stream through node:http (http/files.ts, recordings/media.ts): in-process callers reach them over loopback. */
const STREAMED = /^\/(v[78]\/vm\/files\/(download|upload)|v8\/vm\/recording\/media)$/;

/** The engine's `fetch`: the API in-process, with the same checks, limits and answers as over HTTP. */
export function inProcessFetch(options: { api: Api; url: () => string; logger: Logger; metrics: EngineMetrics | null }): (request: Request) => Promise<Response> {
  const { api, logger, metrics } = options;
  return async (request) => {
    const target = new URL(request.url);
    if (STREAMED.test(target.pathname)) {
      const init: RequestInit & { duplex?: 'half' } = { method: request.method, headers: request.headers, redirect: 'manual', signal: request.signal };
      if (request.body) Object.assign(init, { body: request.body, duplex: 'half' });
      return fetch(`${options.url()}${target.pathname}${target.search}`, init);
    }
    let child: Logger | undefined;
    const log = () => (child ??= logger.child({ reqId: request.headers.get('x-request-id') ?? randomBytes(8).toString('hex') }));
    try {
      const answer = await api.answer({ ...apiRequestOf(request), log });
      return responseOf(answer ?? { status: 404, body: { status: 'denied', message: `no endpoint ${request.method} ${target.pathname.slice(0, 100)}` } });
    } catch (error) {
      requestFailed(error, log(), metrics);
      return responseOf({ status: 200, body: serviceFailure(error) });
    }
  };
}

/** The Web-standard request, as the API reads requests. */
export function apiRequestOf(request: Request): ApiRequest {
  return {
    method: request.method,
    url: new URL(request.url),
    headers: Object.fromEntries(request.headers),
    body: () => readJsonRequest(request),
    signal: request.signal,
  };
}

/** An answer written as a Web-standard response, with the same headers as the node:http path. */
export function responseOf(answer: ApiAnswer): Response {
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { ...SECURITY_HEADERS, 'content-type': JSON_CONTENT_TYPE, ...answer.headers },
  });
}
