// Touch on the remote screen (issue 36). noVNC's own gesture handler stays for what it does well:
// one finger taps (a click) and drags (the mouse moves with the button held), two fingers scroll
// (the wheel), a long press is a right click. A pinch is taken from it here: noVNC would send
// Ctrl+wheel, zooming the remote page for everyone; instead it zooms this viewer's view
// (local-zoom.ts), following the fingers, and the remote display keeps its size. On a view-only
// link, one- and two-finger drags move the zoomed view (noVNC sends nothing from it anyway).
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import { LocalZoom } from './local-zoom.js';
import type { RemoteScreen } from './remote-screen.js';

/** Below this, a pinch that ends goes back to the fitted picture. */
const SNAP_TO_FIT = 1.1;

/** What noVNC's gesture handler puts in its events' `detail` (core/input/gesturehandler.js). */
interface GestureDetail {
  type: 'onetap' | 'twotap' | 'threetap' | 'drag' | 'longpress' | 'twodrag' | 'pinch';
  clientX: number;
  clientY: number;
  magnitudeX?: number;
  magnitudeY?: number;
}

const GESTURE_EVENTS = ['gesturestart', 'gesturemove', 'gestureend'] as const;

function centreOf(touches: TouchList): { x: number; y: number } | null {
  if (touches.length === 0) return null;
  let x = 0;
  let y = 0;
  for (const touch of Array.from(touches)) {
    x += touch.clientX;
    y += touch.clientY;
  }
  return { x: x / touches.length, y: y / touches.length };
}

export interface TouchGestures {
  /** This viewer's zoom of the remote screen: 1 is fitted to the area. */
  zoom: number;
  /** Back to the fitted picture. */
  resetZoom(): void;
}

export function useTouchGestures({ screenRef, remote, viewOnly, connection }: { screenRef: RefObject<HTMLElement | null>; remote: () => RemoteScreen | null; viewOnly: boolean; /** The connection's state: a new connection shows its picture fitted. */ connection: string }): TouchGestures {
  const [zoom, setZoom] = useState(1);
  const viewOnlyRef = useRef(viewOnly);
  viewOnlyRef.current = viewOnly;
  /** The zoom of the connection now, followed while it is the current one. */
  const followed = useRef<{ zoom: LocalZoom; stop: () => void } | null>(null);

  /** The current connection's zoom, following it (a new connection starts fitted). */
  const zoomNow = useCallback((): LocalZoom | null => {
    const screen = remote();
    const zoomer = screen ? LocalZoom.of(screen) : null;
    if (followed.current?.zoom !== zoomer) {
      followed.current?.stop();
      followed.current = zoomer ? { zoom: zoomer, stop: zoomer.follow(setZoom) } : null;
      setZoom(zoomer?.zoom ?? 1);
    }
    return zoomer;
  }, [remote]);

  useEffect(() => {
    const element = screenRef.current;
    if (!element) return;
    /** A gesture this hook has taken from noVNC, and where the fingers were last. */
    let taken: { kind: 'pinch'; from: number; distance: number } | { kind: 'pan' } | null = null;
    let centre: { x: number; y: number } | null = null;

    // Raw touches first (capture, before noVNC's handler on its canvas): the fingers' centre,
    // which a taken gesture's view follows.
    const onTouch = (event: TouchEvent) => {
      const next = centreOf(event.touches);
      if (taken && centre && next && event.type === 'touchmove') zoomNow()?.pan(next.x - centre.x, next.y - centre.y);
      centre = next;
    };
    const onGesture = (event: Event) => {
      const detail = (event as CustomEvent<GestureDetail>).detail;
      if (!detail || typeof detail.type !== 'string') return;
      const pans = viewOnlyRef.current && (detail.type === 'drag' || detail.type === 'twodrag' || detail.type === 'longpress');
      if (detail.type !== 'pinch' && !pans && !taken) return;
      // Taken: noVNC never sees it (stopped on the way down to its canvas).
      event.stopPropagation();
      const zoomer = zoomNow();
      if (!zoomer) return;
      const distance = Math.hypot(detail.magnitudeX ?? 0, detail.magnitudeY ?? 0);
      if (event.type === 'gesturestart') {
        taken = detail.type === 'pinch' ? { kind: 'pinch', from: zoomer.zoom, distance } : { kind: 'pan' };
      } else if (event.type === 'gesturemove' && taken?.kind === 'pinch' && taken.distance > 0) {
        const at = centre ?? { x: detail.clientX, y: detail.clientY };
        zoomer.zoomTo((taken.from * distance) / taken.distance, at.x, at.y);
      } else if (event.type === 'gestureend') {
        if (taken?.kind === 'pinch' && zoomer.zoom < SNAP_TO_FIT) zoomer.reset();
        taken = null;
      }
    };
    for (const type of ['touchstart', 'touchmove', 'touchend', 'touchcancel'] as const) element.addEventListener(type, onTouch, { capture: true, passive: true });
    for (const type of GESTURE_EVENTS) element.addEventListener(type, onGesture, { capture: true });
    return () => {
      for (const type of ['touchstart', 'touchmove', 'touchend', 'touchcancel'] as const) element.removeEventListener(type, onTouch, { capture: true });
      for (const type of GESTURE_EVENTS) element.removeEventListener(type, onGesture, { capture: true });
    };
  }, [screenRef, zoomNow]);

  useEffect(() => void zoomNow(), [connection, zoomNow]);
  useEffect(() => () => followed.current?.stop(), []);

  const resetZoom = useCallback(() => zoomNow()?.reset(), [zoomNow]);
  return { zoom, resetZoom };
}
