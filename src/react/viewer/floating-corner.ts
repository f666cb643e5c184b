// Which corner of the live screen the phone's floating "More" button sits in (issue 44,
// decisions.md 173), kept in localStorage under the viewer's own key: the viewer site's origin for
// a share link opened or framed, the host page's origin for <ShareViewer>, so each origin
// remembers its own. Bottom right by default: a Chromium or Firefox window keeps every control
// of its own (tabs, address bar, extensions, the ⋮ or ☰ menu, the downloads button) on its top
// edge, and Chromium shows a link's address on hover at the bottom left.
export type FloatingCorner = 'top-left' | 'top-right' | 'bottom-left' | 'bottom-right';

export const FLOATING_CORNERS: readonly FloatingCorner[] = ['top-left', 'top-right', 'bottom-left', 'bottom-right'];
export const DEFAULT_FLOATING_CORNER: FloatingCorner = 'bottom-right';
export const FLOATING_CORNER_KEY = 'remote-browser-kit:viewer:more-corner';

function isFloatingCorner(value: unknown): value is FloatingCorner {
  return typeof value === 'string' && (FLOATING_CORNERS as readonly string[]).includes(value);
}

/** The corner chosen last on this origin, else the default (storage blocked, never chosen, or not a corner). */
export function readFloatingCorner(): FloatingCorner {
  try {
    const value = localStorage.getItem(FLOATING_CORNER_KEY);
    return isFloatingCorner(value) ? value : DEFAULT_FLOATING_CORNER;
  } catch {
    return DEFAULT_FLOATING_CORNER;
  }
}

export function writeFloatingCorner(corner: FloatingCorner): void {
  try {
    localStorage.setItem(FLOATING_CORNER_KEY, corner);
  } catch {
    // Storage full or blocked (a private window, a sandboxed frame): the choice lasts for this page only.
  }
}

/** The corner of `area` nearest to a point (the quarter it falls in). */
export function cornerAt(x: number, y: number, area: Pick<DOMRect, 'left' | 'top' | 'width' | 'height'>): FloatingCorner {
  const vertical = y >= area.top + area.height / 2 ? 'bottom' : 'top';
  const horizontal = x >= area.left + area.width / 2 ? 'right' : 'left';
  return `${vertical}-${horizontal}`;
}
