// The viewer's own zoom of the remote screen (issue 36): a pinch enlarges what this viewer shows and
// nothing else; the remote display keeps its size, and no other viewer sees a change. It draws
// noVNC's canvas larger (noVNC's display scale, so a tap still lands where it shows) inside noVNC's
// screen element, which then scrolls to keep the pinched point under the fingers. noVNC scales to
// fit again whenever its area or the remote size changes; the zoom is laid on top of that fit. It
// reads noVNC's private parts (`_display`, `_screen`, `_updateScale`), checked before use: another
// noVNC leaves pinches doing nothing rather than breaking.
import type { RemoteScreen } from './remote-screen.js';

/** The largest local zoom, as a multiple of the size that fits the viewer's area. */
export const MAX_ZOOM = 5;

interface NoVncParts {
  _display?: { scale: number };
  _screen?: HTMLElement;
  _updateScale?: () => void;
}

export class LocalZoom {
  /** The zoom now: 1 shows the remote screen fitted to the area. */
  zoom = 1;
  private fit: number;
  private readonly listeners = new Set<(zoom: number) => void>();

  private constructor(
    private readonly display: { scale: number },
    private readonly screen: HTMLElement,
  ) {
    this.fit = display.scale;
  }

  private static readonly made = new WeakMap<object, LocalZoom>();

  /** The zoom of a noVNC screen (one per connection), or null where noVNC's parts are not as expected. */
  static of(remote: RemoteScreen): LocalZoom | null {
    const known = LocalZoom.made.get(remote);
    if (known) return known;
    const rfb = remote as unknown as NoVncParts;
    const { _display: display, _screen: screen, _updateScale: updateScale } = rfb;
    if (!display || typeof display.scale !== 'number' || !(screen instanceof HTMLElement) || typeof updateScale !== 'function') return null;
    const zoom = new LocalZoom(display, screen);
    // noVNC fits the picture again on each resize: the zoom is laid over the new fit.
    rfb._updateScale = function (this: unknown) {
      updateScale.call(this);
      zoom.fit = display.scale;
      if (zoom.zoom !== 1) display.scale = zoom.fit * zoom.zoom;
    };
    LocalZoom.made.set(remote, zoom);
    return zoom;
  }

  /** Calls `listener` with each new zoom; returns how to stop. */
  follow(listener: (zoom: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sets the zoom, keeping the remote point shown at (`clientX`, `clientY`) where it is. */
  zoomTo(zoom: number, clientX: number, clientY: number): void {
    const next = Math.min(MAX_ZOOM, Math.max(1, zoom));
    if (next === this.zoom) return;
    const canvas = this.canvas();
    const before = canvas?.getBoundingClientRect();
    if (this.zoom === 1) this.fit = this.display.scale;
    this.display.scale = this.fit * next;
    const ratio = next / this.zoom;
    this.zoom = next;
    if (canvas && before) {
      // Where the point would be now, and the scroll that moves it back under the fingers.
      const after = canvas.getBoundingClientRect();
      const wantLeft = clientX - (clientX - before.left) * ratio;
      const wantTop = clientY - (clientY - before.top) * ratio;
      this.screen.scrollLeft += after.left - wantLeft;
      this.screen.scrollTop += after.top - wantTop;
    }
    this.tell();
  }

  /** Moves the zoomed view by what the fingers moved (positive: the picture follows right and down). */
  pan(dx: number, dy: number): void {
    this.screen.scrollLeft -= dx;
    this.screen.scrollTop -= dy;
  }

  /** Back to the picture that fits the area. */
  reset(): void {
    if (this.zoom === 1) return;
    this.zoom = 1;
    this.display.scale = this.fit;
    this.screen.scrollLeft = 0;
    this.screen.scrollTop = 0;
    this.tell();
  }

  private canvas(): HTMLCanvasElement | null {
    return this.screen.querySelector('canvas');
  }

  private tell(): void {
    for (const listener of this.listeners) listener(this.zoom);
  }
}
