// Security suite, the remote browser's network (decisions.md 25) in a real confined Chromium
// session, used as a person would: forbidden addresses in odd spellings typed into its address
// bar, a name that resolves to loopback, redirects from the allowed site to forbidden ones, and
// file:// and chrome:// pages. The operator allows only 127.0.0.2; the forbidden sites listen on
// 127.0.0.1 and 127.0.0.3 and count every request they get.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionRuntime, type RuntimeEvent, type RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { typeAddress, waitFor, x } from '../helpers/session.js';

const ALLOWED_PAGE = '<!doctype html><title>Allowed page</title><body><p>the allowed site</p>';
const SECRET = 'root:x:0:0 the forbidden secret';

let root: string;
let runtime: SessionRuntime;
let session: RuntimeSession;
const events: RuntimeEvent[] = [];
const servers: Server[] = [];
/** The allowed site's port; the forbidden site on 127.0.0.3 listens on the same one. */
let port: number;
/** The forbidden site on 127.0.0.1 (where loopback spellings land). */
let loopbackPort: number;
const allowedRequests: string[] = [];
const forbiddenRequests: string[] = [];

async function listen(host: string, handler: (request: IncomingMessage, response: ServerResponse) => void, at = 0): Promise<number> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at, host, resolve);
  });
  return (server.address() as AddressInfo).port;
}

/** What the page shows now, as text (empty while it loads). */
const pageText = () => session.control!.evaluate('document.body ? document.body.innerText : ""').then(String, () => '');
const title = () => session.control!.evaluate('document.title').then(String, () => '');
const refusedEvents = () => events.filter((e) => e.sessionId === session.id && e.kind === 'refused').map((e) => e.message);

/** Back on the allowed site, so that each check starts from a page that is not a refusal. */
async function backToAllowedSite(): Promise<void> {
  await session.control!.open(`http://127.0.0.2:${port}/`);
  expect(await waitFor(title, (value) => value === 'Allowed page')).toBe('Allowed page');
}

beforeAll(async () => {
  port = await listen('127.0.0.2', (request, response) => {
    if (request.url === '/favicon.ico') return void response.writeHead(404).end();
    allowedRequests.push(request.url ?? '');
    const redirects: Record<string, [number, string]> = {
      '/to-neighbour': [302, `http://127.0.0.3:${port}/secret`],
      '/to-decimal-loopback': [307, `http://2130706433:${loopbackPort}/secret`],
      '/to-metadata': [301, 'http://169.254.169.254/latest/meta-data/'],
      '/to-file': [302, 'file:///etc/passwd'],
    };
    const redirect = redirects[request.url ?? ''];
    if (redirect) return void response.writeHead(redirect[0], { location: redirect[1] }).end();
    if (request.url === '/script-redirect') {
      return void response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Leaving</title><script>location.href = 'http://0x7f000003:${port}/secret'</script>`);
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end(ALLOWED_PAGE);
  });
  const forbidden = (request: IncomingMessage, response: ServerResponse) => {
    forbiddenRequests.push(`${request.socket.localAddress} ${request.url}`);
    response.writeHead(200, { 'content-type': 'text/plain' }).end(SECRET);
  };
  await listen('127.0.0.3', forbidden, port);
  loopbackPort = await listen('127.0.0.1', forbidden);
  root = await mkdtemp(join(tmpdir(), 'rbk-security-net-'));
  ({ runtime } = await SessionRuntime.open({ root, egress: { allow: ['127.0.0.2/32'] } }));
  runtime.on('event', (event) => events.push(event));
  session = await runtime.startSession({ browser: 'chromium', url: `http://127.0.0.2:${port}/`, language: 'en', layout: 'us' });
  expect(await waitFor(title, (value) => value === 'Allowed page')).toBe('Allowed page');
  // Keys go to the browser's window, as a viewer's would.
  await x(session, 'xdotool', ['search', '--onlyvisible', '--class', 'chromium', 'windowactivate', '--sync']).catch(() => '');
});

afterAll(async () => {
  await runtime?.close();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  if (root) await rm(root, { recursive: true, force: true });
  // Whatever each test did, no forbidden site ever got a request.
  expect(forbiddenRequests).toEqual([]);
});

describe('a confined Chromium session allowed only 127.0.0.2', () => {
  it('loads the allowed site', async () => {
    await typeAddress(session, `http://127.0.0.2:${port}/typed`);
    expect(await waitFor(title, (value) => value === 'Allowed page')).toBe('Allowed page');
    expect(await pageText()).toContain('the allowed site');
    expect(allowedRequests).toContain('/typed');
  });

  // [typed address, what the refusal names: the address as the route saw it after Chromium's URL parser]
  const typed = () => [
    [`http://2130706433:${loopbackPort}/secret`, '127.0.0.1 is a loopback address'],
    [`http://0177.0.0.1:${loopbackPort}/secret`, '127.0.0.1 is a loopback address'],
    [`http://0x7f000001:${loopbackPort}/secret`, '127.0.0.1 is a loopback address'],
    [`http://127.1:${loopbackPort}/secret`, '127.0.0.1 is a loopback address'],
    [`http://127.0.0.3:${port}/secret`, '127.0.0.3 is a loopback address'],
    [`http://[::ffff:127.0.0.1]:${loopbackPort}/secret`, 'is a loopback address'],
    [`http://[64:ff9b::7f00:1]:${loopbackPort}/secret`, '64:ff9b::7f00:1 is a loopback address'],
    [`http://[2002:7f00:1::]:${loopbackPort}/secret`, '2002:7f00:1:: is a loopback address'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254 is a cloud metadata address'],
    ['http://10.0.0.1/', '10.0.0.1 is a private address'],
    ['http://[fe80::1]/', 'fe80::1 is a link-local address'],
  ] as const;

  it('refuses forbidden addresses typed into its address bar in every spelling, and says "not allowed"', async () => {
    const outcomes: Record<string, string> = {};
    for (const [address, words] of typed()) {
      await backToAllowedSite();
      const before = refusedEvents().length;
      await typeAddress(session, address);
      const text = await waitFor(pageText, (value) => value.includes('not allowed'), 15_000);
      outcomes[address] = text.includes(words) && !text.includes('forbidden secret') ? 'refused' : `shows ${JSON.stringify(text.slice(0, 160))}`;
      expect(refusedEvents().length, address).toBeGreaterThan(before);
    }
    expect(outcomes).toEqual(Object.fromEntries(typed().map(([address]) => [address, 'refused'])));
  }, 240_000);

  it('refuses a name that resolves to loopback (localhost) without saying where it leads', async () => {
    await backToAllowedSite();
    await typeAddress(session, `http://localhost:${loopbackPort}/secret`);
    const text = await waitFor(pageText, (value) => value.includes('not allowed'), 15_000);
    expect(text).toContain('localhost leads to an address that is not allowed');
    expect(text).not.toContain('127.0.0.1');
    expect(refusedEvents().at(-1)).toMatch(/localhost resolves to/);
  });

  it.each([
    ['/to-neighbour', 'a 302 to 127.0.0.3', '127.0.0.3 is a loopback address'],
    ['/to-decimal-loopback', 'a 307 to 2130706433 (127.0.0.1)', '127.0.0.1 is a loopback address'],
    ['/to-metadata', 'a 301 to 169.254.169.254', '169.254.169.254 is a cloud metadata address'],
    ['/script-redirect', "a script's navigation to 0x7f000003 (127.0.0.3)", '127.0.0.3 is a loopback address'],
  ])('refuses %s on the allowed site: %s', async (path, _what, words) => {
    await backToAllowedSite();
    await typeAddress(session, `http://127.0.0.2:${port}${path}`);
    const text = await waitFor(pageText, (value) => value.includes('not allowed'), 15_000);
    expect(text).toContain(words);
    expect(text).not.toContain('forbidden secret');
    // The allowed site answered; the hop it pointed to was checked again and refused.
    expect(allowedRequests).toContain(path);
  });

  it('refuses a redirect from the allowed site to file://', async () => {
    await backToAllowedSite();
    await typeAddress(session, `http://127.0.0.2:${port}/to-file`);
    // Chromium's own error page, never the file.
    const text = await waitFor(pageText, (value) => value !== '' && !value.includes('the allowed site'), 15_000);
    expect(text).not.toContain('root:x:0:0');
    expect(await session.control!.pages()).not.toContain('file:///etc/passwd');
  });

  it('refuses file://, chrome:// and view-source: pages typed into its address bar', async () => {
    const outcomes: Record<string, string> = {};
    for (const address of ['file:///etc/passwd', 'chrome://settings', 'chrome://version', 'chrome://net-internals', `view-source:http://127.0.0.2:${port}/`]) {
      await backToAllowedSite();
      await typeAddress(session, address);
      const scheme = `${address.split(':')[0]}:`;
      if (scheme === 'file:') {
        // Chromium's own "blocked" error page stays at the address; the file never shows.
        const text = await waitFor(pageText, (value) => value !== '' && !value.includes('the allowed site'), 15_000);
        outcomes[address] = text.includes('root:x:0:0') ? 'shows the file' : text.includes('the allowed site') ? 'nothing happened' : 'refused';
      } else {
        // The engine sends the page away to its refusal page.
        const shown = await waitFor(title, (value) => value === 'Not allowed', 15_000);
        const pages = await session.control!.pages();
        outcomes[address] = shown === 'Not allowed' && !pages.some((url) => url.startsWith(scheme)) ? 'refused' : `shows ${shown} at ${pages.join(', ')}`;
      }
    }
    expect(outcomes).toEqual({
      'file:///etc/passwd': 'refused',
      'chrome://settings': 'refused',
      'chrome://version': 'refused',
      'chrome://net-internals': 'refused',
      [`view-source:http://127.0.0.2:${port}/`]: 'refused',
    });
  }, 120_000);
});
