// jsdom lays nothing out, so the viewer's width (useNarrowViewer: a phone's 560 px or less, or a
// desktop's) comes from this stand-in ResizeObserver: a test installs it and then says the width.
export class StandInResizeObserver {
  static readonly all = new Set<StandInResizeObserver>();
  constructor(private readonly callback: ResizeObserverCallback) {}
  observe(): void {
    StandInResizeObserver.all.add(this);
  }
  unobserve(): void {}
  disconnect(): void {
    StandInResizeObserver.all.delete(this);
  }
  /** Tells every observed viewer its new size. */
  static resize(width: number, height = 600): void {
    for (const observer of StandInResizeObserver.all) observer.callback([{ contentRect: { width, height } } as ResizeObserverEntry], observer as unknown as ResizeObserver);
  }
  /** Puts the stand-in in the window's place (beforeAll). */
  static install(): void {
    (globalThis as { ResizeObserver?: unknown }).ResizeObserver = StandInResizeObserver;
  }
  /** Takes it away again (afterAll). */
  static remove(): void {
    delete (globalThis as { ResizeObserver?: unknown }).ResizeObserver;
  }
}
