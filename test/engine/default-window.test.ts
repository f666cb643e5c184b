// The default window (issue 44, decisions.md 176, 178): `sessions.defaultWindow` is what a v8
// create that does not say `window` gets, for Chromium; `app` unless the operator says otherwise.
// Against the engine's real HTTP interface and store (the fake runtime: what is decided here is
// the session's row and its share state, not a browser; test/engine/app-window-warm.test.ts sees
// the real app window):
// - no setting: a Chromium create without `window` is an app window (its row, its share state's
//   `appWindow`), one with `window: "browser"` is not; a Firefox ESR create without `window` keeps
//   a browser window (its app window would run the remote agent), with `window: "app"` it is one;
//   a v7 create, which has no `window`, keeps a browser window;
// - `browser`: a Chromium create without `window` is a browser window, one with `window: "app"`
//   is an app window;
// - anything else is refused at start, naming the setting.
import { afterEach, describe, expect, it } from 'vitest';
import { parseEngineConfig } from '../../src/engine/config.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';

let fixture: EngineFixture<FakeRuntime> | undefined;

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

/** Creates a session through `/<version>/vm/create`; answers whether its row and its share state say app window. */
async function created(version: 'v8' | 'v7', body: Record<string, unknown>): Promise<{ row: boolean; state: boolean }> {
  const response = await fetch(`${fixture!.engine.url}/${version}/vm/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${fixture!.account.key}` },
    body: JSON.stringify({ url: `${fixture!.site.origin}/`, ...body }),
  });
  const answer = (await response.json()) as { status: string; vmId: string; shareUrl?: string; shareURL?: string };
  expect(answer.status).toBe('ok');
  const row = (await fixture!.engine.store.session(answer.vmId))!;
  const linkId = new URL(answer.shareUrl ?? answer.shareURL!).search.slice(1) || new URL(answer.shareUrl ?? answer.shareURL!).pathname.split('/').at(-1)!;
  const state = (await (await fetch(`${fixture!.engine.url}/share/${linkId}`)).json()) as { appWindow?: boolean };
  return { row: row.app_window === true, state: state.appWindow === true };
}

describe('the window a create gets when it does not say', () => {
  it('is an app window for Chromium under v8 without the setting; Firefox ESR and v7 keep a browser window', async () => {
    expect(parseEngineConfig({}).sessions.defaultWindow).toBe('app');
    fixture = await startEngine({ name: 'default-window-none', runtime: 'fake' });
    expect(await created('v8', { browser: 'chromium' })).toEqual({ row: true, state: true });
    expect(await created('v8', { browser: 'chromium', window: 'browser' })).toEqual({ row: false, state: false });
    expect(await created('v8', { browser: 'firefox-esr' })).toEqual({ row: false, state: false });
    expect(await created('v8', { browser: 'firefox-esr', window: 'app' })).toEqual({ row: true, state: true });
    expect(await created('v7', { browser: 'chromium' })).toEqual({ row: false, state: false });
  });

  it('is the operator\'s browser window when the setting says `browser`; a create\'s own `window` still wins', async () => {
    fixture = await startEngine({ name: 'default-window-browser', runtime: 'fake', config: { sessions: { defaultWindow: 'browser' } } });
    expect(await created('v8', { browser: 'chromium' })).toEqual({ row: false, state: false });
    expect(await created('v8', { browser: 'chromium', window: 'app' })).toEqual({ row: true, state: true });
    expect(await created('v8', { browser: 'firefox-esr' })).toEqual({ row: false, state: false });
    expect(await created('v7', { browser: 'chromium' })).toEqual({ row: false, state: false });
  });

  it('refuses any other value, naming the setting', () => {
    expect(() => parseEngineConfig({ sessions: { defaultWindow: 'kiosk' } })).toThrow(/sessions\.defaultWindow: must be browser or app/);
  });
});
