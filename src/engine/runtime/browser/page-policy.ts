// What a session's browser may show, and how to read a page's title: the addresses the DevTools
// guard lets a tab open (control.ts), those a session may be created on, and Chromium's stand-in
// for a title a page has not given yet (the viewer's tabs and the recording's timeline skip it).

/** Schemes a page may show. Everything else (file:, chrome:, view-source:, devtools:, ...) is refused. */
export const ALLOWED_PAGE = /^(https?:|about:blank|data:|blob:)/i;
// Chromium's own new-tab page must keep working, or every new tab would be refused.
export const NEW_TAB_PAGE = /^chrome(-search)?:\/\/(newtab|new-tab-page|new-tab-page-third-party)\b/i;
/** The developer tools' own pages: a viewer never gets them. */
export const DEVTOOLS_FRONTEND = /^devtools:/i;

/** Whether an address is a web page (http or https): what a session may be created on. */
export function isNavigableUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Until a page has a title, Chromium gives its address (without the scheme) in its place. */
export function untitled(info: { url: string; title?: string }): boolean {
  const bare = info.url.replace(/^[a-z]+:\/\//i, '');
  return !info.title || info.title === info.url || info.title === bare || info.title === bare.replace(/\/$/, '');
}
