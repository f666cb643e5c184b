// Which tab watcher a session's browser gets (tabs.ts): Chromium's through the engine's DevTools
// guard; Firefox ESR's through its remote agent, only in an app window (decisions.md 103); none
// for a Firefox in a browser window (its own strip shows its tabs).
import type { BrowserImage } from './catalog.js';
import { ChromiumTabs } from './chromium-tabs.js';
import type { BrowserControl } from './control.js';
import { FirefoxTabs } from './firefox-tabs.js';
import type { BiDiHub } from './bidi-hub.js';
import type { SessionTabs } from './tabs.js';

export type { SessionTabs };

/** `appWindow`: a Chromium's windows are kept fullscreen at each look (app-window.ts). */
export async function watchTabs(browser: { control: BrowserControl | null; image: BrowserImage; bidi: { hub: BiDiHub } | null }, appWindow: boolean, timeoutMs: number): Promise<SessionTabs | null> {
  if (browser.control) return ChromiumTabs.start(browser.control, appWindow);
  if (browser.image.family !== 'chromium' && appWindow) {
    if (!browser.bidi) throw new Error(`${browser.image.name}'s tabs cannot be reached in an app window: its remote agent is not running`);
    return FirefoxTabs.connect(browser.bidi.hub, timeoutMs).catch((error: Error) => {
      throw new Error(`${browser.image.name}'s tabs cannot be reached in an app window: ${error.message}`);
    });
  }
  return null;
}
