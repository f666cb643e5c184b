// Share-link look-up limits (decisions.md 41): only ids that never existed count, against the
// address that sent them, so guessing is limited without locking out people who hold valid links;
// behind the operator's trusted proxies that address is the one X-Forwarded-For names, and from
// any other peer the header is ignored. Requests leave from chosen loopback addresses
// (127.0.0.2 is the trusted proxy here, 127.0.0.3 a client that is not).
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useEngine } from './context.js';
import { connectRfb } from '../helpers/rfb-client.js';
import { PLANS, testConfig, waitForStatus } from './harness.js';

const PROXY = '127.0.0.2';
const STRANGER = '127.0.0.3';
const ctx = useEngine({ config: testConfig({ trustedProxies: [`${PROXY}/32`] }) });

/** GET a share API path from a given local address, with an optional X-Forwarded-For. */
function lookUp(path: string, from: string, forwardedFor?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, ctx.engine.url), { localAddress: from, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const guess = (index: number) => `/share/${'G'.repeat(20)}${String(index).padStart(4, '0')}`;

/** Guesses until refused; answers how many were answered 404 first. */
async function guessUntilLimited(from: string, forwardedFor?: (index: number) => string): Promise<number> {
  for (let index = 0; index < 400; index++) {
    const status = await lookUp(guess(index), from, forwardedFor?.(index));
    if (status === 429) return index;
    expect(status).toBe(404);
  }
  throw new Error('400 guesses were never limited');
}

describe('share-link look-ups', () => {
  let validLink: string;

  it('behind a trusted proxy, guessing locks out the guesser only; valid links always answer', async () => {
    const { api } = await ctx.account([PLANS.basic]);
    const created = await api.create({ browser: 'chromium', url: ctx.pages.page });
    expect(created.json.status).toBe('ok');
    ctx.track(api, created.json.vmId);
    expect(await waitForStatus(api, created.json.vmId, ['running'], 30_000)).toBe('running');
    validLink = `/share/${new URL(created.json.shareUrl).search.slice(1)}`;

    const answered = await guessUntilLimited(PROXY, () => '198.51.100.7');
    expect(answered).toBeGreaterThan(50);
    // The guesser is locked out...
    expect(await lookUp(guess(9999), PROXY, '198.51.100.7')).toBe(429);
    // ...but not the other viewers behind the same proxy, and a valid link answers even for the guesser.
    expect(await lookUp(guess(9998), PROXY, '198.51.100.8')).toBe(404);
    expect(await lookUp(validLink, PROXY, '198.51.100.8')).toBe(200);
    expect(await lookUp(validLink, PROXY, '198.51.100.7')).toBe(200);
    // The proxy's own address was never counted: a request without the header is its own client.
    expect(await lookUp(guess(9997), PROXY)).toBe(404);
  });

  it('from a peer that is not a trusted proxy, X-Forwarded-For is ignored: a guesser cannot spread its guesses', async () => {
    const answered = await guessUntilLimited(STRANGER, (index) => `203.0.113.${index % 250}`);
    expect(answered).toBeGreaterThan(50);
    expect(await lookUp(guess(9996), STRANGER, '203.0.113.251')).toBe(429);
    expect(await lookUp(validLink, STRANGER)).toBe(200);
  });

  it('eight viewers joining one link at once (its cap) all see the display', async () => {
    const url = `${ctx.engine.url.replace('http', 'ws')}${validLink}/rfb`;
    const viewers = await Promise.all(Array.from({ length: 8 }, () => connectRfb(url)));
    for (const viewer of viewers) expect((await viewer.pixel(640, 400)).length).toBe(3);
    for (const viewer of viewers) viewer.close();
  });

  it('a malformed X-Forwarded-For from the proxy counts against the proxy, not a made-up address', async () => {
    expect(await lookUp(guess(9995), PROXY, 'not-an-address, <script>')).toBe(404);
  });
});
