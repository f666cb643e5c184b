// A session's browser on its first page, in the slot it took: a browser launched there (cold, or on
// a warm display), or a warm one given the session's zone and first page (decisions.md 63).
// Resolves once the window is shown and the first navigation has begun, not when the page loads.
import { fillDisplay } from '../browser/app-window.js';
import { launchBrowser } from '../browser/browser.js';
import type { BrowserImage } from '../browser/catalog.js';
import { BrowserControl } from '../browser/control.js';
import { openInFirefox } from '../browser/firefox-handout.js';
import type { SessionSlot } from './slot.js';
import { overrideTimeZone } from '../browser/zone-override.js';

export interface FirstPage {
  image: BrowserImage;
  /** The address as parsed; undefined: the blank page. */
  url: string | undefined;
  language: string;
  /** The interface locale the image shows for `language` (locales.ts). */
  locale: string;
  timeZone: string;
  width: number;
  height: number;
  timeoutMs: number;
  /** A saved profile's tabs come back (decisions.md 89). */
  restoreTabs?: boolean;
  /**
   * An app window: a browser launched here in kiosk mode (decisions.md 104), or a warm Chromium
   * whose window is made fullscreen at hand-out (decisions.md 175). A warm Firefox never is one.
   */
  window?: 'browser' | 'app';
  /** Programs may drive it (decisions.md 143): a Firefox is launched with its remote agent, never a warm one. */
  automation?: boolean;
}

export async function browserOnFirstPage(slot: SessionSlot, page: FirstPage): Promise<void> {
  const { image, url, language, locale, timeZone, width, height, timeoutMs, restoreTabs, window, automation } = page;
  if (!slot.browser) {
    const process = await launchBrowser({ image, sandbox: slot.sandbox, display: slot.display, sound: slot.sound, width, height, language, locale, timeZone, timeoutMs, ...(restoreTabs ? { restoreTabs } : {}), ...(window ? { window } : {}), ...(automation ? { automation } : {}) }, url ?? 'about:blank');
    const browser = await slot.addBrowser({ process, image, language, timeZone, control: null, tabs: null });
    const connected = async () => {
      if (!process.devtoolsUrl) return;
      browser.control = await BrowserControl.connect(process.devtoolsUrl, language, process.reader);
      if (url) await browser.control.firstNavigationStarted();
    };
    await Promise.all([process.windowShown, connected()]);
  } else if (slot.browser.control) {
    // A warm browser waits on an empty page in the default zone: it takes the session's
    // zone, then starts on the first page (or the blank page a browser without one shows). An app
    // window fills the display first, so the person never sees its strip.
    if (window === 'app') await fillDisplay(slot.browser.control);
    if (slot.browser.timeZone !== timeZone) {
      await overrideTimeZone(slot.browser.control, timeZone);
      slot.browser.timeZone = timeZone;
    }
    await slot.browser.control.openInPlace(url ?? 'about:blank');
  } else if (url) {
    // A warm Firefox waits on about:blank: its address bar takes the first page.
    await openInFirefox(slot.sandbox, slot.display, url);
  }
}
