// A tab's title in the share state (issue 43, findings 3 and 4), against a real engine and real,
// confined browsers. A page whose own title is huge, and whose `document.title` answers a bigger
// string still to its own scripts, shows its real title cut to MAX_TITLE and no icon for an icon
// address as huge, and the engine's heap does not grow by the strings' size: none crossed out of
// the page (Chromium in its default window, an app window since decisions.md 178; Firefox ESR in
// an app window). A tab a program opens over
// the automation address (`Target.createTarget`) shows its page's title in the share state, with
// nobody watching the tabs (Chromium does not tell a title the page gives after its navigation).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { ShareTab, ViewerState } from '../../src/protocol/index.js';
import { MAX_TITLE } from '../../src/engine/runtime/browser/tabs.js';
import { shareLinkOf } from '../helpers/automation.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { waitFor, x } from '../helpers/session.js';
import { followShareEvents } from '../helpers/share-events.js';

/** The huge title's length, in characters (each a byte in V8's heap). */
const HUGE = 40_000_000;
/** What a program's page is called; the site answers it a second late (a title often comes after the tab). */
const PROGRAM_TITLE = 'Opened by a program';

const PAGES: Record<string, string> = {
  '/': '<!doctype html><title>First</title><body>the first page</body>',
  // Once clicked (the session runs by then: Firefox busy with a huge title may not answer its start):
  // its real title is HUGE y's, what its own scripts read as its title HUGE x's, its icon's address HUGE characters.
  '/huge': `<!doctype html><title>Real</title>
<a id="huge" style="position:fixed;inset:0;display:block;background:#cde">make the title huge</a><script>
document.getElementById('huge').addEventListener('click', () => {
  document.title = 'y'.repeat(${HUGE});
  Object.defineProperty(document, 'title', { get: () => 'x'.repeat(${HUGE}), configurable: true });
  const icon = document.createElement('link');
  icon.rel = 'icon';
  icon.href = 'data:image/png;base64,' + 'A'.repeat(${HUGE});
  document.head.append(icon);
}, { once: true });
</script>`,
  '/slow': `<!doctype html><title>${PROGRAM_TITLE}</title><body>a program opened this tab</body>`,
};

// The engine runs in this process: its heap is measured here, after a full collection.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const heapUsed = () => {
  collect();
  return process.memoryUsage().heapUsed;
};

let fixture: EngineFixture;

beforeAll(async () => {
  fixture = await startEngine({
    name: 'tab-titles',
    site: (request, response) => {
      const html = PAGES[request.url ?? ''];
      if (!html) return void response.writeHead(404).end();
      const answer = () => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      if (request.url === '/slow') setTimeout(answer, 1000);
      else answer();
    },
  });
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

/** Creates a session on `path` of the site and waits until it runs: its share link id. */
async function runningSession(path: string, options: Record<string, unknown>): Promise<{ vmId: string; linkId: string }> {
  const created = await fixture.call('/vm/create', { url: `${fixture.site.origin}${path}`, ...options });
  expect(created.status).toBe('ok');
  const status = await waitFor(async () => (await fixture.call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (s) => s === 'running' || s === 'error', 45_000);
  expect([status, (await fixture.engine.store.session(created.vmId))?.end_reason]).toEqual(['running', null]);
  return { vmId: created.vmId as string, linkId: shareLinkOf(created.shareUrl) };
}

/** The tabs of the share state, read as a viewer's first request reads them (nobody follows the tabs). */
async function stateTabs(linkId: string): Promise<ShareTab[]> {
  const state = (await (await fetch(`${fixture.engine.url}/share/${linkId}`)).json()) as ViewerState;
  return state.tabs ?? [];
}

/** Follows a link's event stream (so the engine reads its tabs every second): the latest tabs it told. */
function follow(linkId: string): { tabs(): ShareTab[]; stop(): void } {
  let latest: ShareTab[] = [];
  const stop = followShareEvents(`${fixture.engine.url}/share/${linkId}/events`, (state) => (latest = state.tabs ?? latest));
  return { tabs: () => latest, stop };
}

describe.each([
  { browser: 'chromium', window: undefined },
  { browser: 'firefox-esr', window: 'app' as const },
])("a huge title stays in the page: $browser", ({ browser, window }) => {
  it("shows the page's real title cut to the cap, and the engine's heap does not grow by the title's size", async () => {
    const before = heapUsed();
    const { vmId, linkId } = await runningSession('/huge', { browser, ...(window ? { window } : {}) });
    // Followed, so each tab is read every second: a page read in its own world would answer x's each time.
    const watching = follow(linkId);
    try {
      await waitFor(() => watching.tabs()[0]?.title, (t) => t === 'Real', 15_000);
      const session = fixture.engine.runtime.get((await fixture.engine.store.session(vmId))!.runtime_id!)!;
      await x(session, 'xdotool', ['mousemove', '400', '400', 'click', '1']);
      const expected = 'y'.repeat(MAX_TITLE);
      const title = await waitFor(() => watching.tabs()[0]?.title, (t) => t === expected, 30_000);
      // Not x's: the page's own scripts' answer never reached the engine.
      expect(title?.slice(0, 10)).toBe(expected.slice(0, 10));
      expect(title).toBe(expected);
      expect((await stateTabs(linkId))[0]?.title).toBe(expected);
      expect(watching.tabs()[0]?.favicon).toBeUndefined();
      // A second round of reads: the engine held no copy of any of the page's huge strings.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(heapUsed() - before).toBeLessThan(HUGE / 2);
    } finally {
      watching.stop();
      await fixture.call('/vm/remove', { id: vmId });
    }
  }, 120_000);
});

describe('a tab a program opens', () => {
  it('shows its page\'s title in the share state, with nobody watching the tabs', async () => {
    const { vmId, linkId } = await runningSession('/', { browser: 'chromium' });
    const automation = await fixture.call(`/vm/automation?id=${vmId}`);
    expect(automation.status).toBe('ok');
    const program = new WebSocket(automation.browserWSEndpoint as string);
    try {
      await new Promise<void>((resolve, reject) => {
        program.once('open', () => resolve());
        program.once('error', reject);
      });
      const created = new Promise<{ result?: { targetId: string }; error?: { message: string } }>((resolve) => {
        program.on('message', (data) => {
          const message = JSON.parse(String(data)) as { id?: number };
          if (message.id === 1) resolve(message as never);
        });
      });
      program.send(JSON.stringify({ id: 1, method: 'Target.createTarget', params: { url: `${fixture.site.origin}/slow` } }));
      const answer = await created;
      expect(answer.error).toBeUndefined();
      const tab = answer.result!.targetId;
      // The tab shows at once; its title once its page has one (a generous bound: the machine is loaded).
      expect(await waitFor(async () => (await stateTabs(linkId)).some((t) => t.id === tab), Boolean, 15_000)).toBe(true);
      const titles = async () => (await stateTabs(linkId)).map((t) => `${t.id === tab ? 'program:' : ''}${t.title}`).join(',');
      expect(await waitFor(titles, (t) => t === `First,program:${PROGRAM_TITLE}`, 20_000)).toBe(`First,program:${PROGRAM_TITLE}`);
    } finally {
      program.close();
      await fixture.call('/vm/remove', { id: vmId });
    }
  }, 120_000);
});
