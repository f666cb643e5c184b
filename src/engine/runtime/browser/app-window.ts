// A warm Chromium made an app window at hand-out (decisions.md 175): its one window goes
// fullscreen through DevTools, which on Linux hides the tab strip and the address bar as kiosk mode
// does, so an app window no longer needs a launch of its own. Kiosk mode is a command-line switch
// and cannot be turned on in a running browser; fullscreen can, and could be left (a program's
// DevTools), and Ctrl+N opens a window of its own (kiosk mode's too), so the engine puts every
// window of an app window back to fullscreen whenever it looks at the tabs (chromium-tabs.ts).
import type { BrowserControl } from './control.js';

type WindowState = 'normal' | 'minimized' | 'maximized' | 'fullscreen';

/** How long a fullscreen asked for may take to be told as the window's state. */
const FULLSCREEN_TOLD_MS = 3000;

/** The window that holds the browser's first tab (the only window a warm browser has). */
async function firstWindow(control: BrowserControl): Promise<number> {
  const { windowId } = await control.client.send('Browser.getWindowForTarget', { targetId: await control.firstPage() });
  return windowId;
}

async function stateOf(control: BrowserControl, windowId: number): Promise<WindowState | undefined> {
  const { bounds } = await control.client.send('Browser.getWindowBounds', { windowId });
  return bounds.windowState as WindowState | undefined;
}

/**
 * Makes the browser's window fill the display without its own strip and address bar, and resolves
 * once the browser tells it is fullscreen. Tabs opened later (by a page, a person or the viewer's
 * strip) open in this window and stay in it.
 */
export async function fillDisplay(control: BrowserControl): Promise<void> {
  const windowId = await firstWindow(control);
  await control.client.send('Browser.setWindowBounds', { windowId, bounds: { windowState: 'fullscreen' } });
  const deadline = Date.now() + FULLSCREEN_TOLD_MS;
  while ((await stateOf(control, windowId)) !== 'fullscreen' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

/**
 * Puts every window of an app window's browser to fullscreen where it is not: one a person left
 * some way, or a new one (Ctrl+N opens a browser window with its own strip, in kiosk mode too).
 * Answers how many it put back. A window or tab that is gone meanwhile is no fault here: the tabs
 * watcher tells that.
 */
export async function keepFillingDisplay(control: BrowserControl): Promise<number> {
  const pages = (await control.targets()).filter((target) => target.type === 'page' && !control.isOwnTarget(target.targetId));
  const windows = new Set<number>();
  for (const page of pages) {
    const found = await control.client.send('Browser.getWindowForTarget', { targetId: page.targetId }).catch(() => undefined);
    if (found) windows.add(found.windowId);
  }
  let putBack = 0;
  for (const windowId of windows) {
    const state = await stateOf(control, windowId).catch(() => undefined);
    if (state === undefined || state === 'fullscreen') continue;
    await control.client.send('Browser.setWindowBounds', { windowId, bounds: { windowState: 'fullscreen' } }).catch(() => undefined);
    putBack++;
  }
  return putBack;
}
