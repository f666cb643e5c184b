// Whether the live screen is a phone's width or a small frame's (issue 44): 560 px or less, the
// width at which the compact toolbar becomes one floating button (styles.css, the container query).
// Measured on the element itself, not the window, since a framed or embedded viewer is often
// narrower than the page around it. Where ResizeObserver is missing (a server, an old test DOM) it
// answers false: the toolbar the embedder chose.
import { useEffect, useState, type RefObject } from 'react';

/** The widest viewer that counts as narrow, in CSS pixels (the container query's max-width). */
export const NARROW_VIEWER_PX = 560;

export function useNarrowViewer(ref: RefObject<HTMLElement | null>): boolean {
  const [narrow, setNarrow] = useState(false);
  useEffect(() => {
    const element = ref.current;
    if (!element || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver((entries) => {
      const width = entries[entries.length - 1]!.contentRect.width;
      // A viewer not laid out (0 wide, display: none) keeps what it had.
      if (width > 0) setNarrow(width <= NARROW_VIEWER_PX);
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref]);
  return narrow;
}
