// A warm Firefox ESR taking its session's first page. Firefox has no DevTools connection here
// (firefox-launcher.ts), so the address is given the way a person gives it: into the address bar
// of its only window, with xdotool inside the session, as one command (select the bar, type, Enter).
// Its time zone is the one it started in (TZ): Firefox has no way to change it for a running
// browser, so warm Firefox browsers serve sessions in the default zone only (decisions.md 63). The
// blank page it waited on stays one step back in the tab's history (nothing outside DevTools can
// take it out).
import type { Display } from '../display/display.js';
import type { SessionSandbox } from '../sandbox/confinement.js';

/** Opens `url` (http or https, already parsed) in the warm Firefox on `display`. */
export async function openInFirefox(sandbox: SessionSandbox, display: Display, url: string): Promise<void> {
  // The address as ASCII (URL.href is: punycode, percent-escapes), typed with the keys the layout
  // has, then Enter. Each step is a command of its own: the bar takes keys a moment after it is
  // selected (what is typed before goes to the page), and xdotool's chained commands, or a newline
  // typed as Enter, are lost on it.
  await sandbox.run('xdotool', ['key', '--clearmodifiers', 'ctrl+l'], display.env);
  await new Promise((resolve) => setTimeout(resolve, BAR_SELECTED_MS));
  await sandbox.run('xdotool', ['type', '--clearmodifiers', '--delay', '0', url], display.env);
  await sandbox.run('xdotool', ['key', '--clearmodifiers', 'Return'], display.env);
}

/** How long after Ctrl+L the address bar takes what is typed. */
const BAR_SELECTED_MS = 100;
