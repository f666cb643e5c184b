// Follows a share link's viewer state: one read of the share API, then its server-sent events;
// where events cannot go, a read every few seconds; while the API cannot be reached, reads with
// back-off. Framework-free with a subscribe/getState shape (src/react/viewer/useViewerState.ts binds it).
import { isViewerState, type ViewerState, type ViewerStateName } from '../protocol/share.js';
import { shareApiUrl } from '../protocol/share-api.js';
import { readViewerState, type ShareApiTarget } from './share-api.js';
import { Subscribable } from './subscribable.js';

/** What a viewer shows: a viewer state's screen, or its own while it cannot read the share API. */
export type ViewerScreen = ViewerStateName | 'loading' | 'unreachable';

export interface ViewerStateSnapshot {
  /** The last state the share API reported; `null` before the first. */
  state: ViewerState | null;
  screen: ViewerScreen;
  /** When the next read after a failure happens (epoch ms); `null` while none is due. */
  retryAt: number | null;
}

/** Without server-sent events, the state is read this often. */
export const STATE_POLL_MS = 3000;
const RETRY_BACKOFF_MS = [1000, 2000, 4000, 8000, 15000, 30000];

/** The wait before retry number `attempt` (from 0) of the share API or of the live connection: 1 s doubling to 30 s. */
export function retryDelay(attempt: number): number {
  return RETRY_BACKOFF_MS[Math.min(attempt, RETRY_BACKOFF_MS.length - 1)]!;
}

export class ViewerStateFollower extends Subscribable<ViewerStateSnapshot> {
  #stopCurrent: (() => void) | null = null;

  constructor() {
    super({ state: null, screen: 'loading', retryAt: null });
  }

  /**
   * Follows a link (stopping whatever it followed before); without a share base and a link id the
   * screen is `gone`. With `fetch` given, the state is polled: server-sent events cannot go through it.
   */
  follow(target: { shareBase: string | null; linkId: string | null; fetch?: typeof fetch | undefined }): void {
    this.stop();
    const { shareBase, linkId } = target;
    if (!shareBase || !linkId) {
      this.update({ screen: 'gone' });
      return;
    }
    const api: ShareApiTarget = { shareBase, linkId, fetch: target.fetch };
    let stopped = false;
    let events: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let attempt = 0;
    const apply = (value: ViewerState) => {
      attempt = 0;
      this.update({ state: value, screen: value.state, retryAt: null });
    };
    const retry = () => {
      if (stopped) return;
      const wait = retryDelay(attempt++);
      this.update({ retryAt: Date.now() + wait });
      timer = setTimeout(load, wait);
    };
    const load = async () => {
      try {
        const answer = await readViewerState(api);
        if (stopped) return;
        if (answer === 'gone') return this.update({ screen: 'gone' });
        apply(answer);
        if (answer.state === 'gone') return;
        if (typeof EventSource === 'undefined' || target.fetch) {
          timer = setTimeout(load, STATE_POLL_MS);
          return;
        }
        events = new EventSource(shareApiUrl(shareBase, linkId, 'events'));
        events.addEventListener('state', (event) => {
          const next: unknown = JSON.parse((event as MessageEvent<string>).data);
          if (isViewerState(next)) apply(next);
        });
        events.onerror = () => {
          // A closed stream (the link is gone, or the service restarted) falls back to a fresh read.
          if (events?.readyState === EventSource.CLOSED) {
            events = null;
            retry();
          }
        };
      } catch {
        if (stopped) return;
        if (this.getState().screen === 'loading') this.update({ screen: 'unreachable' });
        retry();
      }
    };
    void load();
    this.#stopCurrent = () => {
      stopped = true;
      clearTimeout(timer);
      events?.close();
    };
  }

  /** Stops following: no more reads, the event stream closed. The last snapshot stays. */
  stop(): void {
    this.#stopCurrent?.();
    this.#stopCurrent = null;
  }
}
