// Framing the viewer on named sites only (issue 44, decisions.md 134), against a real engine (its
// sessions on the fake runtime: the headers are the viewer site's, whatever runs the browser):
// `POST/GET /v8/user/embed` with its refusals, `embed` of vm/create narrowing the list for one
// session, and the Content-Security-Policy / X-Frame-Options each share page and view-only page
// answers; on SQLite and on Postgres. Needs the viewer site and the element built (`npm run build`, or
// `npx vite build --mode viewer-site && npx vite build --mode element`).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { testDatabase } from '../helpers/postgres.js';

let fixture: EngineFixture<FakeRuntime>;
const APP = 'https://app.example.com';
const LOCAL = 'http://127.0.0.1:5173';

/** The sessions a test made, ended after it (the plan runs 5 at once). */
const made: string[] = [];
afterEach(async () => {
  for (const id of made.splice(0)) expect(await fixture.call('/vm/remove', { id })).toEqual({ status: 'ok' });
});

/** What a page says of framing: its frame-ancestors sources and its X-Frame-Options (null: none). */
async function framing(url: string): Promise<{ status: number; ancestors: string[]; xFrameOptions: string | null }> {
  const response = await fetch(url);
  await response.arrayBuffer();
  const policy = response.headers.get('content-security-policy') ?? '';
  const directive = policy.split(';').map((part) => part.trim()).find((part) => part.startsWith('frame-ancestors ')) ?? '';
  return { status: response.status, ancestors: directive.split(/\s+/).slice(1), xFrameOptions: response.headers.get('x-frame-options') };
}

const UNFRAMED = { status: 200, ancestors: ["'self'"], xFrameOptions: 'SAMEORIGIN' };
const framedBy = (...origins: string[]) => ({ status: 200, ancestors: origins, xFrameOptions: null });

/** Creates a session (its share link and view-only link), or answers the refusal. */
async function create(extra: Record<string, unknown> = {}): Promise<{ share: string; view: string } | { refused: Record<string, any> }> {
  const created = await fixture.call('/vm/create', { browser: 'chromium', ...extra });
  if (created.status !== 'ok') return { refused: created };
  made.push(created.vmId as string);
  const share = created.shareUrl as string;
  const linkId = new URL(share).search.slice(1);
  const viewOnly = await (await fetch(`${fixture.engine.url}/share/${linkId}/view-only`, { method: 'POST' })).json() as { shareUrl: string };
  return { share, view: viewOnly.shareUrl };
}

async function created(extra: Record<string, unknown> = {}): Promise<{ share: string; view: string }> {
  const made = await create(extra);
  if ('refused' in made) throw new Error(`create refused: ${JSON.stringify(made.refused)}`);
  return made;
}

describe.each(['sqlite', 'postgres'] as const)('the origins an account allows to frame its links (%s)', (database) => {
  beforeAll(async () => {
    // On Postgres the engine is a node of a (one-node) cluster, which needs its secret.
    fixture = await startEngine({ name: 'embed', runtime: 'fake', ...(database === 'postgres' ? { database: await testDatabase(), config: { cluster: { secret: 'a-cluster-secret-of-at-least-32-characters' } } } : {}) });
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('are none at first: every link is framed only by the viewer site itself, as before', async () => {
    expect(await fixture.call('/user/embed')).toEqual({ status: 'ok', origins: [] });
    const { share, view } = await created();
    expect(await framing(share)).toEqual(UNFRAMED);
    expect(await framing(view)).toEqual(UNFRAMED);
  });

  it('refuse a wildcard, a path, plain http off loopback, a bad form and over 20, naming the field; the list stays as it was', async () => {
    expect(await fixture.call('/user/embed', { origins: [APP] })).toEqual({ status: 'ok', origins: [APP] });
    const refusals: Array<[unknown, RegExp]> = [
      [{ origins: ['*'] }, /^origins\[0\]: "\*": no wildcards/],
      [{ origins: [APP, 'https://*.example.com'] }, /^origins\[1\]: .*no wildcards/],
      [{ origins: ['https://app.example.com/embed'] }, /^origins\[0\]: .*is not an origin: send scheme:\/\/host\[:port\] only/],
      [{ origins: ['https://app.example.com/'] }, /^origins\[0\]: .*without a path, query, user or trailing slash/],
      [{ origins: ['https://App.example.com'] }, /^origins\[0\]: .*in lower case/],
      [{ origins: ['https://a.example.com;script-src *'] }, /^origins\[0\]: /],
      [{ origins: ['http://app.example.com'] }, /^origins\[0\]: "http:\/\/app.example.com": must be https \(plain http only for localhost/],
      [{ origins: ['ftp://app.example.com'] }, /^origins\[0\]: .*is not an origin/],
      [{ origins: ['http://[::1]:3000'] }, /^origins\[0\]: "http:\/\/\[::1\]:3000": browsers do not match an IPv6 address in frame-ancestors/],
      [{ origins: [42] }, /^origins: each origin must be a string/],
      [{ origins: [''] }, /^origins\[0\]: must be an origin/],
      [{ origins: Array.from({ length: 21 }, (_, i) => `https://site${i}.example.com`) }, /^origins: at most 20 origins \(21 sent\)$/],
      [{ origins: 'https://app.example.com' }, /^origins: must be a list of origins/],
      [{}, /^origins: must be a list of origins/],
    ];
    for (const [body, message] of refusals) {
      const answer = await fixture.call('/user/embed', body);
      expect(answer, JSON.stringify(body)).toMatchObject({ status: 'denied' });
      expect(answer.message, JSON.stringify(body)).toMatch(message);
    }
    expect(await fixture.call('/user/embed')).toEqual({ status: 'ok', origins: [APP] });
  });

  it('frame a link with exactly those origins and no X-Frame-Options; the view-only link the same', async () => {
    // Loopback may be plain http; a repeat is kept once.
    expect(await fixture.call('/user/embed', { origins: [APP, LOCAL, 'http://localhost:8080', APP] })).toEqual({ status: 'ok', origins: [APP, LOCAL, 'http://localhost:8080'] });
    const { share, view } = await created();
    expect(await framing(share)).toEqual(framedBy(APP, LOCAL, 'http://localhost:8080'));
    expect(await framing(view)).toEqual(framedBy(APP, LOCAL, 'http://localhost:8080'));
    // A link that does not exist, and the launch page, stay unframeable.
    expect(await framing(`${fixture.engine.url}/en/s?${'A'.repeat(22)}`)).toEqual({ ...UNFRAMED, status: 404 });
    expect(await framing(`${fixture.engine.url}/`)).toEqual(UNFRAMED);
  });

  it("narrow to a session's own list at create, which must be the account's; [] frames it nowhere", async () => {
    await fixture.call('/user/embed', { origins: [APP, LOCAL] });
    const narrowed = await created({ embed: { origins: [LOCAL] } });
    expect(await framing(narrowed.share)).toEqual(framedBy(LOCAL));
    expect(await framing(narrowed.view)).toEqual(framedBy(LOCAL));
    const nowhere = await created({ embed: { origins: [] } });
    expect(await framing(nowhere.share)).toEqual(UNFRAMED);

    const sessionsBefore = (await fixture.call('/vm/data')).data.length;
    const stranger = await create({ embed: { origins: [LOCAL, 'https://other.example.com'] } });
    expect(stranger).toEqual({ refused: { status: 'denied', message: `embed: the origin "https://other.example.com" is not one the account allows to frame its links (${APP}, ${LOCAL}); add it with POST /v8/user/embed first` } });
    const badForm = await create({ embed: { origins: ['https://*.example.com'] } });
    expect(badForm).toMatchObject({ refused: { status: 'denied', message: expect.stringMatching(/^embed\.origins\[0\]: .*no wildcards/) } });
    expect(await create({ embed: ['https://app.example.com'] })).toMatchObject({ refused: { status: 'denied', message: expect.stringMatching(/^embed: must be an object/) } });
    expect((await fixture.call('/vm/data')).data.length).toBe(sessionsBefore);
  });

  it('follow the account: an origin it drops stops framing every link at once, narrowed ones too; [] turns framing off', async () => {
    await fixture.call('/user/embed', { origins: [APP, LOCAL] });
    const wide = await created();
    const narrowed = await created({ embed: { origins: [APP] } });
    expect(await fixture.call('/user/embed', { origins: [LOCAL] })).toEqual({ status: 'ok', origins: [LOCAL] });
    expect(await framing(wide.share)).toEqual(framedBy(LOCAL));
    expect(await framing(narrowed.share)).toEqual(UNFRAMED);
    expect(await fixture.call('/user/embed', { origins: [] })).toEqual({ status: 'ok', origins: [] });
    expect(await framing(wide.share)).toEqual(UNFRAMED);
    expect(await framing(wide.view)).toEqual(UNFRAMED);
  });

  it("come with the element's one script, which any page may load (`npm run build` makes it)", async () => {
    const script = await fetch(`${fixture.engine.url}/element.js`, { headers: { origin: APP } });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('access-control-allow-origin')).toBe('*');
    expect(await script.text()).toContain('remote-browser-viewer');
  });

  it('are read and set only with the API key, from a server', async () => {
    await fixture.call('/user/embed', { origins: [LOCAL] });
    const anonymous = await fetch(`${fixture.engine.url}/v8/user/embed`);
    expect(anonymous.status).toBe(401);
    const fromBrowser = await fetch(`${fixture.engine.url}/v8/user/embed`, { method: 'POST', headers: { authorization: `Bearer ${fixture.account.key}`, origin: APP, 'content-type': 'application/json' }, body: JSON.stringify({ origins: [APP] }) });
    expect(fromBrowser.status).toBe(403);
    expect(await fixture.call('/user/embed')).toEqual({ status: 'ok', origins: [LOCAL] });
  });
});
