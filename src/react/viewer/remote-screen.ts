// The live screen's transport: a noVNC connection to the session's display through the share
// API, loaded lazily (noVNC touches `window` when imported). Its reconnect policy is
// src/core/reconnect.ts; this file only connects, disconnects and reports.
import { BROWSER_MIN_WIDTH } from '../../protocol/limits.js';
import { shareApiUrl } from '../../protocol/share-api.js';
import { VIEWER_KEY_QUERY } from '../../protocol/control.js';
import type { ReconnectTransport } from '../../core/reconnect.js';

/** The part of noVNC's RFB the viewer uses. */
export interface RemoteScreen {
  focus(options?: FocusOptions): void;
  sendKey(keysym: number, code: string | null, down?: boolean): void;
  clipboardPasteFrom(text: string): void;
  disconnect(): void;
  addEventListener(type: string, listener: (event: CustomEvent) => void): void;
  scaleViewport: boolean;
  resizeSession: boolean;
  viewOnly: boolean;
  focusOnClick: boolean;
  background: string;
}

/** The display size the engine gives an area: a narrower one than a browser window gets the minimum width, same shape. */
export function remoteSizeFor(area: { w: number; h: number }): { w: number; h: number } {
  const w = Math.floor(area.w);
  const h = Math.floor(area.h);
  if (w <= 0 || w >= BROWSER_MIN_WIDTH) return { w, h };
  return { w: BROWSER_MIN_WIDTH, h: Math.round((h * BROWSER_MIN_WIDTH) / w) };
}

/**
 * noVNC asks the display for the size of its area and asks again whenever the two differ. The
 * engine may give another size (a phone narrower than a browser window, or the operator's
 * limits): so noVNC asks for what the engine would give, and asks for one size once. This
 * replaces two of noVNC's private methods, so it checks they exist and leaves noVNC alone if not.
 */
export function askForRemoteSizesOnce(remote: RemoteScreen): void {
  const rfb = remote as unknown as { _requestRemoteResize?: () => void; _screenSize?: () => { w: number; h: number }; _pendingRemoteResize?: boolean };
  const request = rfb._requestRemoteResize;
  const screenSize = rfb._screenSize;
  if (typeof request !== 'function' || typeof screenSize !== 'function') return;
  let asked: { w: number; h: number } | null = null;
  rfb._requestRemoteResize = () => {
    const size = remoteSizeFor(screenSize.call(remote));
    if (asked && asked.w === size.w && asked.h === size.h) return;
    const pending = rfb._pendingRemoteResize;
    rfb._screenSize = () => size;
    try {
      request.call(remote);
    } finally {
      delete rfb._screenSize;
    }
    if (!pending && rfb._pendingRemoteResize) asked = size;
  };
}

export interface RemoteScreenOptions {
  shareBase: string;
  linkId: string;
  /** The viewer key among the session's people (issue 36): its input counts as its own. */
  viewerKey?: string | undefined;
  /** Where noVNC draws; `null` once unmounted. */
  target: () => HTMLElement | null;
  /** Read at each connection: whether this viewer only watches. */
  viewOnly: () => boolean;
  onConnect(): void;
  /** The connection dropped or could not be made. */
  onDrop(): void;
  /** noVNC itself did not load. */
  onLoadFailed(): void;
  onClipboard(text: string): void;
  /** Read at each connection: whether the engine offers video (the state's `video`); the viewer then switches to it while the display moves, where the browser decodes it. */
  video?: () => boolean;
  /** Video started or stopped on the current connection. */
  onVideo?(video: boolean): void;
}

/** What the lazily loaded video mode (src/core/video-mode.ts) gives a connection. */
type VideoModule = typeof import('../../core/video-mode.js');

/** A transport for the reconnect policy, and the connection keys and pastes go through now. */
export interface RemoteScreenTransport extends ReconnectTransport {
  /** The connected (or connecting) noVNC screen, or `null`. */
  current(): RemoteScreen | null;
}

export function remoteScreenTransport(options: RemoteScreenOptions): RemoteScreenTransport {
  // The viewer key (issue 36): its keys count as its own among the session's people.
  const url = `${shareApiUrl(options.shareBase, options.linkId, 'rfb')}${options.viewerKey ? `?${VIEWER_KEY_QUERY}=${encodeURIComponent(options.viewerKey)}` : ''}`;
  const videoUrl = shareApiUrl(options.shareBase, options.linkId, 'video');
  /** Loaded once, for the first connection that may use it; null where this browser cannot decode the video. */
  let videoModule: Promise<VideoModule | null> | null = null;
  const loadVideo = () =>
    (videoModule ??= import('../../core/video-mode.js').then(
      async (module) => ((await module.canPlayVideo()) ? module : null),
      // Not loaded (offline, a blocked chunk): the picture stays RFB alone.
      () => null,
    ));
  let current: RemoteScreen | null = null;
  /** Closes the latest connection attempt. */
  let closeLatest: () => void = () => undefined;

  function connect(): void {
    closeLatest();
    let cancelled = false;
    let remote: RemoteScreen | null = null;
    let videoMode: InstanceType<VideoModule['VideoMode']> | null = null;
    closeLatest = () => {
      cancelled = true;
      videoMode?.close();
      if (current === remote) current = null;
      try {
        remote?.disconnect();
      } catch {
        /* already closed */
      }
    };
    void Promise.all([import('@novnc/novnc'), options.video?.() ? loadVideo() : null]).then(
      ([{ default: RFB }, video]) => {
        const target = options.target();
        if (cancelled || !target) return;
        try {
          if (video) {
            videoMode = new video.VideoMode({
              rfbUrl: url,
              videoUrl,
              target,
              // noVNC's display queue (private; without it the overlay waits one frame).
              drawing: () => Boolean((remote as unknown as { _display?: { pending?: () => boolean } } | null)?._display?.pending?.()),
              onChange: (on) => options.onVideo?.(on),
            });
          }
          remote = new RFB(target, videoMode ? videoMode.socket : url, { shared: true }) as unknown as RemoteScreen;
        } catch {
          videoMode?.close();
          options.onDrop();
          return;
        }
        current = remote;
        const viewOnly = options.viewOnly();
        // The remote display takes this viewer's size when it controls; other viewers' sizes
        // show scaled to fit (the engine decides who controls: the latest to give input).
        remote.scaleViewport = true;
        remote.resizeSession = !viewOnly;
        askForRemoteSizesOnce(remote);
        remote.viewOnly = viewOnly;
        // Keys go through the viewer's own text input (useRemoteKeyboard), which IMEs and dead keys work in.
        remote.focusOnClick = false;
        remote.background = 'var(--rbk-viewer-backdrop)';
        remote.addEventListener('connect', () => options.onConnect());
        const thisConnection = remote;
        remote.addEventListener('disconnect', () => {
          videoMode?.close();
          // A connection replaced meanwhile (a retry while the session started) must not clear
          // the handle of the one that replaced it: keys and pastes go through that handle.
          if (current === thisConnection) current = null;
          if (cancelled) return;
          options.onDrop();
        });
        remote.addEventListener('clipboard', (event) => options.onClipboard(String((event.detail as { text?: string })?.text ?? '')));
      },
      () => options.onLoadFailed(),
    );
  }

  return {
    connect,
    disconnect: () => {
      closeLatest();
      closeLatest = () => undefined;
    },
    current: () => current,
  };
}
