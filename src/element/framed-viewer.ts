// A share link's viewer in an iframe of the host page, from the host's side (issue 44,
// decisions.md 136): the iframe with the `allow` list the viewer needs, the message API's events
// taken only from that iframe's window at the share link's origin (and parsed: the host checks
// them too), and typed commands posted only to that origin. `embed()` and
// `<remote-browser-viewer>` are built on it. No framework, nothing at import.
import { EMBED_MESSAGE_VERSION, parseEmbedEvent, type EmbedCommand, type EmbedEvent, type WithoutVersion } from '../protocol/embed-messages.js';
import { isShareLanguage, type ShareLanguage } from '../protocol/languages.js';
import { viewerToolbarChoice, type ViewerChrome, type ViewerToolbarChoice } from '../protocol/share.js';

/** What the framed viewer is allowed in the host page: the remote clipboard, sound, fullscreen. */
export const VIEWER_FRAME_ALLOW = 'clipboard-read; clipboard-write; autoplay; fullscreen';

export interface FramedViewerOptions {
  /** `compact`: the waiting screen's title and progress only. Default `full`. */
  chrome?: ViewerChrome;
  /** The live screen's toolbar: `compact` (default: one row, the rest behind "More"; a floating button on a phone), `full` (every control laid out, in rows on a wide frame), `none` (your page gives the commands). */
  toolbar?: ViewerToolbarChoice;
  /** Watch only, whatever the link allows (the viewer sends no input and acts on no command). */
  viewOnly?: boolean;
  /** The iframe's title, for screen readers. Default "Remote browser". */
  title?: string;
  /** The viewer's language (en, de, fr, es, it, pt, ja) instead of the link's own segment; any other value keeps the link's. */
  language?: ShareLanguage | string;
}

export type EmbedEventListener<T extends EmbedEvent['type']> = (event: Extract<EmbedEvent, { type: T }>) => void;

/**
 * The iframe's address: the share link with the embedder's options after its id. Throws for
 * anything but an http or https share link (`/<lang>/s?<link_id>`).
 */
export function framedViewerUrl(shareUrl: string, options: FramedViewerOptions = {}): URL {
  const url = new URL(shareUrl);
  const linkId = url.search.slice(1).split('&')[0] ?? '';
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !/\/s$/.test(url.pathname) || !/^[A-Za-z0-9_-]{16,64}$/.test(linkId)) {
    throw new TypeError('not a share link: expected https://<service>/<lang>/s?<link_id>');
  }
  // A choice is written as it is; none chosen leaves the viewer site's default (the one row).
  const chosen = viewerToolbarChoice(options.toolbar);
  const toolbar = chosen ? `&toolbar=${chosen}` : '';
  url.search = `?${linkId}${options.chrome === 'compact' ? '&chrome=compact' : ''}${toolbar}${options.viewOnly ? '&view-only' : ''}`;
  // The viewer speaks the language of the link's `/<lang>/s` segment: replaced (or added) here.
  if (isShareLanguage(options.language)) url.pathname = url.pathname.replace(/(?:\/[a-z]{2})?\/s$/, `/${options.language}/s`);
  url.hash = '';
  return url;
}

export class FramedViewer {
  readonly iframe: HTMLIFrameElement;
  readonly origin: string;
  #listeners = new Set<(event: EmbedEvent) => void>();
  #ready = false;
  readonly #onMessage = (event: MessageEvent) => {
    // Only the viewer's own window at the share link's origin: any other page could post anything.
    if (event.source !== this.iframe.contentWindow || event.origin !== this.origin) return;
    const message = parseEmbedEvent(event.data);
    if (!message) return;
    if (message.type === 'ready') this.#ready = true;
    for (const listener of this.#listeners) listener(message);
  };
  readonly #onLoad = () => this.send({ type: 'hello' });

  constructor(shareUrl: string, options: FramedViewerOptions = {}, document: Document = globalThis.document) {
    const url = framedViewerUrl(shareUrl, options);
    this.origin = url.origin;
    this.iframe = document.createElement('iframe');
    this.iframe.allow = VIEWER_FRAME_ALLOW;
    this.iframe.title = options.title ?? 'Remote browser';
    // The link is the credential: the frame's requests say nothing of the host page.
    this.iframe.referrerPolicy = 'no-referrer';
    this.iframe.src = url.href;
    this.iframe.addEventListener('load', this.#onLoad);
    document.defaultView?.addEventListener('message', this.#onMessage);
  }

  /** Whether the viewer said `ready` (it then takes commands). */
  get ready(): boolean {
    return this.#ready;
  }

  /** Follows every event; answers the way to stop. */
  listen(listener: (event: EmbedEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Follows one kind of event; answers the way to stop. */
  on<T extends EmbedEvent['type']>(type: T, listener: EmbedEventListener<T>): () => void {
    return this.listen((event) => {
      if (event.type === type) listener(event as Extract<EmbedEvent, { type: T }>);
    });
  }

  /** Posts a command to the viewer, only ever at the share link's origin. */
  send(command: WithoutVersion<EmbedCommand>): void {
    this.iframe.contentWindow?.postMessage({ rbk: EMBED_MESSAGE_VERSION, ...command }, this.origin);
  }

  switchTab(tab: string): void {
    this.send({ type: 'tab', action: 'switch', tab });
  }

  closeTab(tab: string): void {
    this.send({ type: 'tab', action: 'close', tab });
  }

  openTab(url?: string): void {
    this.send(url === undefined ? { type: 'tab', action: 'open' } : { type: 'tab', action: 'open', url });
  }

  /** Takes the tab to another http or https address (an app window has no address bar of its own). */
  goTab(tab: string, url: string): void {
    this.send({ type: 'tab', action: 'go', tab, url });
  }

  /** In one-driver mode: ask for control, stop asking, hand it back, or (the owner's viewer) take it. */
  control(action: 'ask' | 'cancel' | 'release' | 'take'): void {
    this.send({ type: 'control', action });
  }

  /** Puts the keyboard focus in the remote screen: the iframe first (a page moves focus into a frame), then the viewer's own input. */
  focus(): void {
    this.iframe.focus();
    this.send({ type: 'focus' });
  }

  /** Mutes the session's sound at this viewer (`unmute()`, `setVolume()`); the `sound` event tells what it is now. */
  mute(): void {
    this.send({ type: 'sound', muted: true });
  }

  unmute(): void {
    this.send({ type: 'sound', muted: false });
  }

  /** The volume, 0 to 1. */
  setVolume(volume: number): void {
    this.send({ type: 'sound', volume: Math.min(1, Math.max(0, volume)) });
  }

  /**
   * Shows the viewer in full screen, from the host page: call it from a press's handler (a
   * browser allows full screen only then). `exitFullscreen()` leaves it.
   */
  fullscreen(): Promise<void> {
    return this.iframe.requestFullscreen();
  }

  exitFullscreen(): Promise<void> {
    const document = this.iframe.ownerDocument;
    return document.fullscreenElement ? document.exitFullscreen() : Promise.resolve();
  }

  /** Leaves as the viewer's Leave button does: it closes its connections and answers `closed`. */
  leave(): void {
    this.send({ type: 'leave' });
  }

  /** Stops listening and removes the iframe. */
  destroy(): void {
    this.iframe.ownerDocument.defaultView?.removeEventListener('message', this.#onMessage);
    this.iframe.removeEventListener('load', this.#onLoad);
    this.#listeners.clear();
    this.iframe.remove();
  }
}

/**
 * Shows a share link's viewer in `container` (an iframe filling it) and answers the handle for
 * its events and commands. The service must allow this page's origin to frame the link
 * (`POST /v8/user/embed`); any other page gets the browser's refusal.
 */
export function embed(container: HTMLElement, shareUrl: string, options: FramedViewerOptions = {}): FramedViewer {
  const viewer = new FramedViewer(shareUrl, options, container.ownerDocument);
  viewer.iframe.style.cssText = 'border:0;display:block;width:100%;height:100%';
  container.append(viewer.iframe);
  return viewer;
}
