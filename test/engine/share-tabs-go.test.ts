// An app window's address, driven from the viewer (issue 44, decisions.md 174): a session created
// with `window: "app"` has no address bar of its own, and its share state says so (`appWindow`);
// `POST /share/<link>/tabs {"action":"go","tab","url"}` takes the tab to another address, as
// typing it would, against a real engine and a real confined browser: the browser shows the page
// (its window's title and the site asked for it), the tab strip tells the new address and title,
// and there is still one tab. Refused, changing nothing: a view-only link, an address that is not
// http or https (javascript:, file:, data:), a tab the browser does not have, a body without an
// address or with one too long. Chromium, and Firefox ESR over WebDriver BiDi.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShareTab, ViewerState } from '../../src/protocol/index.js';
import type { RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { waitFor, x } from '../helpers/session.js';

const PAGES: Record<string, string> = {
  '/': '<!doctype html><title>First</title><body style="background:#cde">the first page</body>',
  '/second': '<!doctype html><title>Second</title><body style="background:#edc">the second page</body>',
};

let fixture: EngineFixture;
const asked: string[] = [];

beforeAll(async () => {
  fixture = await startEngine({
    name: 'share-tabs-go',
    site: (request, response) => {
      asked.push(request.url ?? '');
      const html = PAGES[(request.url ?? '').split('?')[0]!];
      if (!html) return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    },
  });
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

function act(linkId: string, body: unknown): Promise<{ status: number; body: Record<string, any> }> {
  return fetch(`${fixture.engine.url}/share/${linkId}/tabs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    .then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, any> }));
}

const state = async (linkId: string) => (await (await fetch(`${fixture.engine.url}/share/${linkId}`)).json()) as ViewerState;
const shown = (tabs: ShareTab[] | undefined) => (tabs ?? []).map((tab) => `${tab.title}${tab.active ? '*' : ''} ${new URL(tab.url).pathname}`).join(',');

/** The title of the browser's window: the page it shows. */
async function windowTitle(session: RuntimeSession): Promise<string> {
  const ids = (await x(session, 'xdotool', ['search', '--onlyvisible', '--name', '.']).catch(() => '')).trim().split('\n').filter(Boolean);
  const names = await Promise.all(ids.map((id) => x(session, 'xdotool', ['getwindowname', id]).catch(() => '')));
  return names.map((name) => name.trim()).join(' | ');
}

describe.each(['chromium', 'firefox-esr'])('an app window driven to another address: %s', (browser) => {
  it('says it is an app window, goes where the share link sends the tab, and refuses anything else', async () => {
    asked.length = 0;
    const created = await fixture.call('/vm/create', { browser, url: `${fixture.site.origin}/`, window: 'app' });
    expect(created.status).toBe('ok');
    const linkId = new URL(created.shareUrl).search.slice(1);
    const status = await waitFor(async () => (await fixture.call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running' || s === 'error', 60_000);
    expect([status, (await fixture.engine.store.session(created.vmId))?.end_reason]).toEqual(['running', null]);
    const session = fixture.engine.runtime.get((await fixture.engine.store.session(created.vmId))!.runtime_id!)!;
    const viewLinkId = ((await (await fetch(`${fixture.engine.url}/share/${linkId}/view-only`, { method: 'POST' })).json()) as { linkId: string }).linkId;
    try {
      expect((await state(linkId)).appWindow).toBe(true);
      expect((await state(viewLinkId)).appWindow).toBe(true);
      await waitFor(async () => shown((await state(linkId)).tabs), (t) => t === 'First* /', 20_000);
      const [tab] = (await state(linkId)).tabs!;

      // Refused, each saying why; the browser stays on the first page.
      const refusals: Array<[string, number, unknown]> = [
        ['view-only', 403, await act(viewLinkId, { action: 'go', tab: tab!.id, url: `${fixture.site.origin}/second` })],
        ['javascript:', 400, await act(linkId, { action: 'go', tab: tab!.id, url: 'javascript:document.title="owned"' })],
        ['file:', 400, await act(linkId, { action: 'go', tab: tab!.id, url: 'file:///etc/passwd' })],
        ['data:', 400, await act(linkId, { action: 'go', tab: tab!.id, url: 'data:text/html,<title>owned</title>' })],
        ['no url', 400, await act(linkId, { action: 'go', tab: tab!.id })],
        ['url not a string', 400, await act(linkId, { action: 'go', tab: tab!.id, url: ['https://a.example/'] })],
        ['url too long', 400, await act(linkId, { action: 'go', tab: tab!.id, url: `https://a.example/${'a'.repeat(2100)}` })],
        ['no tab', 400, await act(linkId, { action: 'go', url: `${fixture.site.origin}/second` })],
        ['unknown tab', 404, await act(linkId, { action: 'go', tab: 'no-such-tab', url: `${fixture.site.origin}/second` })],
      ];
      for (const [what, code, answer] of refusals) {
        expect([what, (answer as { status: number }).status, (answer as { body: { status: string } }).body.status], what).toEqual([what, code, 'denied']);
      }
      expect((refusals[0]![2] as { body: { message: string } }).body.message).toMatch(/view-only link .* cannot .*navigate/);
      expect((refusals[1]![2] as { body: { message: string } }).body.message).toMatch(/http or https/);
      expect(asked.filter((path) => path.startsWith('/second'))).toEqual([]);
      expect(await windowTitle(session)).toContain('First');
      expect(shown((await state(linkId)).tabs)).toBe('First* /');

      // The share link sends the tab to the second page: answered with its new address at once.
      const went = await act(linkId, { action: 'go', tab: tab!.id, url: `${fixture.site.origin}/second?from=viewer` });
      expect(went.status).toBe(200);
      expect((went.body.tabs as ShareTab[]).map((each) => [each.id, new URL(each.url).pathname + new URL(each.url).search])).toEqual([[tab!.id, '/second?from=viewer']]);
      // The browser shows it, and the strip tells its title; still one tab.
      expect(await waitFor(() => windowTitle(session), (t) => t.includes('Second'), 15_000)).toContain('Second');
      expect(asked).toContain('/second?from=viewer');
      expect(await waitFor(async () => shown((await state(linkId)).tabs), (t) => t === 'Second* /second', 15_000)).toBe('Second* /second');
    } finally {
      await fixture.call('/vm/remove', { id: created.vmId });
    }
  }, 150_000);
});
