'use client';
// <ShareViewer>: what whoever holds a share link sees: a waiting screen in the link's language,
// then the remote browser itself through noVNC (mouse, wheel, touch, clipboard; keys and any text
// a person can type, IME and dead keys included, through the viewer's own text input), sized to
// the viewer's area, then an ended or gone screen with a way to leave. A view-only link (or the
// viewOnly prop) watches. Sized by its container; no global styles.
import { useCallback, useEffect, useId, useMemo, useRef, useState, type CSSProperties, type KeyboardEvent as ReactKeyboardEvent } from 'react';
import { I18nextProvider, useTranslation } from 'react-i18next';
// Zod-free parts of the protocol only: the viewer must stay small in any host page.
import { isShareLanguage, type ShareLanguage } from '../protocol/languages.js';
import { isViewerState, isWebAddress, parseShareLink, shareBaseOf, type ViewerState, type ViewerStateName } from '../protocol/share.js';
import { createComponentI18n } from './i18n.js';

export interface ShareViewerProps {
  /** The full share link, `{share_base}/<lang>/s?<link_id>`. */
  shareUrl?: string;
  /** Instead of shareUrl: the share base and the link id. */
  shareBase?: string;
  linkId?: string;
  /** Overrides the language of the link's `<lang>` segment. */
  language?: ShareLanguage;
  /** Called with each new screen: waiting, running, ended, gone. */
  onStateChange?: (state: ViewerStateName) => void;
  /** Called when the viewer presses Leave, with where leaving goes. Default: navigate there. */
  onLeave?: (leaveUrl: string) => void;
  /**
   * Watch without sending mouse or keyboard input. A view-only link always watches (the engine
   * passes nothing else from it); this makes a full link watch too.
   */
  viewOnly?: boolean;
  className?: string;
  style?: CSSProperties;
  /**
   * The fetch for the share API's state reads and the round-trip pings (for example a stand-in in
   * stories or tests). Given one, the viewer polls the state instead of opening an EventSource.
   */
  fetch?: typeof fetch;
}

/** What the viewer shows while it cannot read the share API. */
type Screen = ViewerStateName | 'loading' | 'unreachable';

const POLL_MS = 3000;
const BACKOFF_MS = [1000, 2000, 4000, 8000, 15000, 30000];
const backoff = (attempt: number) => BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]!;

// ---------------------------------------------------------------------------------------------
// Share API state: one GET, then server-sent events; polling with back-off when either fails.

function useViewerState(shareBase: string | null, linkId: string | null, shareFetch: typeof fetch | undefined) {
  const [state, setState] = useState<ViewerState | null>(null);
  const [screen, setScreen] = useState<Screen>('loading');
  const [retryAt, setRetryAt] = useState<number | null>(null);

  useEffect(() => {
    if (!shareBase || !linkId) {
      setScreen('gone');
      return;
    }
    let stopped = false;
    let events: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let attempt = 0;
    const apply = (value: ViewerState) => {
      attempt = 0;
      setRetryAt(null);
      setState(value);
      setScreen(value.state);
    };
    const retry = () => {
      if (stopped) return;
      const wait = backoff(attempt++);
      setRetryAt(Date.now() + wait);
      timer = setTimeout(load, wait);
    };
    async function load() {
      try {
        const response = await (shareFetch ?? fetch)(`${shareBase}/share/${linkId}`, { cache: 'no-store' });
        if (stopped) return;
        if (response.status === 404) return setScreen('gone');
        if (!response.ok) throw new Error(`share API answered ${response.status}`);
        const answer: unknown = await response.json();
        if (!isViewerState(answer)) throw new Error('unexpected share API answer');
        apply(answer);
        if (answer.state === 'gone') return;
        if (typeof EventSource === 'undefined' || shareFetch) {
          // No server-sent events here (or they could not go through the given fetch): read the
          // state again every few seconds.
          timer = setTimeout(load, POLL_MS);
          return;
        }
        events = new EventSource(`${shareBase}/share/${linkId}/events`);
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
        setScreen((current) => (current === 'loading' ? 'unreachable' : current));
        retry();
      }
    }
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
      events?.close();
    };
  }, [shareBase, linkId, shareFetch]);

  return { state, screen, retryAt };
}

/** Seconds left until `at`, ticking once a second. */
function useCountdown(at: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (at === null) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [at]);
  return at === null ? 0 : Math.max(0, Math.ceil((at - now) / 1000));
}

// ---------------------------------------------------------------------------------------------
// Waiting screen

function WaitingScreen({ browserName }: { browserName: string }) {
  const { t } = useTranslation('viewer');
  const [seconds, setSeconds] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setSeconds((s) => s + 1), 1000);
    return () => clearInterval(timer);
  }, []);
  return (
    <div className="rbk-viewer__panel">
      <h2 className="rbk-viewer__title">{t('waiting.title')}</h2>
      <p className="rbk-viewer__detail">{t('waiting.detail', { browser: browserName })}</p>
      <div className="rbk-viewer__progress" role="progressbar" aria-label={t('waiting.progress')} aria-valuetext={t('waiting.elapsed', { seconds })}>
        <div className="rbk-viewer__progress-bar" />
      </div>
      <p className="rbk-viewer__elapsed" aria-hidden="true">
        {t('waiting.elapsed', { seconds })}
      </p>
      <p className="rbk-viewer__sr-only" role="status" aria-live="polite">
        {t('waiting.status', { browser: browserName })}
      </p>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Ended, gone and unreachable screens

function EndScreen({ kind, onLeave, retryIn }: { kind: 'ended' | 'gone' | 'unreachable'; onLeave?: () => void; retryIn?: number }) {
  const { t } = useTranslation('viewer');
  const key = kind === 'unreachable' ? 'error' : kind;
  return (
    <div className="rbk-viewer__panel" role={kind === 'unreachable' ? 'alert' : undefined}>
      <h2 className="rbk-viewer__title">{t(`${key}.title`)}</h2>
      <p className="rbk-viewer__detail">{t(`${key}.detail`, { seconds: retryIn ?? 0 })}</p>
      {onLeave ? (
        <button type="button" className="rbk-button rbk-button--primary" onClick={onLeave}>
          {t('leave')}
        </button>
      ) : null}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Live screen: noVNC, loaded lazily (it touches `window` when imported)

interface RemoteScreen {
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

const KEYSYM = { Escape: 0xff1b, Tab: 0xff09, Control: 0xffe3, Alt: 0xffe9, BackSpace: 0xff08, Return: 0xff0d } as const;

/** X keysym of a character (Latin-1 directly, the rest as Unicode keysyms, which Xvnc maps to a spare key). */
function keysymOf(character: string): number {
  const code = character.codePointAt(0) ?? 0;
  return code < 0x100 ? code : 0x01000000 | code;
}

/**
 * X keysyms of the keys that type no text (DOM `KeyboardEvent.key` names). Text itself arrives
 * through the input's `input` and `composition` events, whatever keyboard, layout or input
 * method made it, and goes to the remote browser as the characters' own keysyms.
 */
const KEY_KEYSYMS: Record<string, number> = {
  Backspace: 0xff08, Tab: 0xff09, Enter: 0xff0d, Escape: 0xff1b, Delete: 0xffff, Insert: 0xff63,
  Home: 0xff50, End: 0xff57, PageUp: 0xff55, PageDown: 0xff56,
  ArrowLeft: 0xff51, ArrowUp: 0xff52, ArrowRight: 0xff53, ArrowDown: 0xff54,
  Shift: 0xffe1, Control: 0xffe3, Alt: 0xffe9, Meta: 0xffe7, AltGraph: 0xfe03, CapsLock: 0xffe5, ContextMenu: 0xff67,
  F1: 0xffbe, F2: 0xffbf, F3: 0xffc0, F4: 0xffc1, F5: 0xffc2, F6: 0xffc3, F7: 0xffc4, F8: 0xffc5, F9: 0xffc6, F10: 0xffc7, F11: 0xffc8, F12: 0xffc9,
};

/** True when a key event is a shortcut (Ctrl, Meta, or Alt without AltGr) rather than typing. */
function isShortcut(event: KeyboardEvent): boolean {
  return event.ctrlKey || event.metaKey || (event.altKey && !event.getModifierState('AltGraph'));
}

/**
 * The narrowest a remote browser window goes (the engine's viewer-room.ts BROWSER_MIN_WIDTH): a
 * narrower area asks for this width with the area's shape, and shows it scaled to fit.
 */
const BROWSER_MIN_WIDTH = 500;

function remoteSizeFor(area: { w: number; h: number }): { w: number; h: number } {
  const w = Math.floor(area.w);
  const h = Math.floor(area.h);
  if (w <= 0 || w >= BROWSER_MIN_WIDTH) return { w, h };
  return { w: BROWSER_MIN_WIDTH, h: Math.round((h * BROWSER_MIN_WIDTH) / w) };
}

/**
 * noVNC asks the display for the size of its area and asks again whenever the two differ. The
 * engine may give another size (a phone narrower than a browser window, or the operator's
 * limits): so noVNC asks for what the engine would give, and asks for one size once.
 */
function askForRemoteSizesOnce(remote: RemoteScreen): void {
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

type Connection = 'connecting' | 'connected' | 'reconnecting';

/** Two Escs closer than this move the keyboard focus out of the remote screen, to the toolbar. */
const LEAVE_ESCAPE_MS = 600;

/** While the session starts, the viewer connects behind the waiting screen and retries this often. */
const PRECONNECT_RETRY_MS = 300;

function LiveScreen({ shareBase, linkId, browserName, viewOnly, viewers, onLeave, shareFetch, hidden }: { shareBase: string; linkId: string; browserName: string; viewOnly: boolean; viewers: number | null; onLeave: () => void; shareFetch?: typeof fetch; hidden: boolean }) {
  const { t } = useTranslation('viewer');
  const rootRef = useRef<HTMLDivElement>(null);
  const screenRef = useRef<HTMLDivElement>(null);
  const keyboardRef = useRef<HTMLTextAreaElement>(null);
  const remoteRef = useRef<RemoteScreen | null>(null);
  const [connection, setConnection] = useState<Connection>('connecting');
  const [reconnectAt, setReconnectAt] = useState<number | null>(null);
  const [attempt, setAttempt] = useState(0);
  const [rttMs, setRttMs] = useState<number | null>(null);
  const [fullscreen, setFullscreen] = useState(false);
  const [pasting, setPasting] = useState(false);
  const [pasteText, setPasteText] = useState('');
  const [remoteClipboard, setRemoteClipboard] = useState('');
  const [modifiers, setModifiers] = useState<{ Control: boolean; Alt: boolean }>({ Control: false, Alt: false });
  const [viewLink, setViewLink] = useState<{ url: string } | { failed: true } | null>(null);
  const lastEscapeAt = useRef(0);
  const leaveKeysId = useId();
  /** Keys sent down at keydown (shortcuts, keys that type no text), by DOM code, for their keyup. */
  const keysDown = useRef(new Map<string, number>());
  const reconnectIn = useCountdown(reconnectAt);
  // Read inside the connection's event handlers, which outlive a render.
  const hiddenRef = useRef(hidden);
  hiddenRef.current = hidden;
  const connectionRef = useRef(connection);
  connectionRef.current = connection;

  // One noVNC connection per attempt; a dropped connection retries with back-off.
  useEffect(() => {
    let cancelled = false;
    let remote: RemoteScreen | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const url = `${shareBase.replace(/^http/, 'ws')}/share/${linkId}/rfb`;
    void import('@novnc/novnc').then(
      ({ default: RFB }) => {
        if (cancelled || !screenRef.current) return;
        try {
          remote = new RFB(screenRef.current, url, { shared: true }) as unknown as RemoteScreen;
        } catch {
          const wait = hiddenRef.current ? PRECONNECT_RETRY_MS : backoff(attempt);
          setConnection('reconnecting');
          setReconnectAt(Date.now() + wait);
          timer = setTimeout(() => setAttempt((a) => a + 1), wait);
          return;
        }
        remoteRef.current = remote;
        // The remote display takes this viewer's size when it controls; other viewers' sizes
        // show scaled to fit (the engine decides who controls: the latest to give input).
        remote.scaleViewport = true;
        remote.resizeSession = !viewOnly;
        askForRemoteSizesOnce(remote);
        remote.viewOnly = viewOnly;
        // Keys go through the viewer's own text input (below), which IMEs and dead keys work in.
        remote.focusOnClick = false;
        remote.background = 'var(--rbk-viewer-backdrop)';
        remote.addEventListener('connect', () => {
          setConnection('connected');
          setReconnectAt(null);
          setAttempt(0);
        });
        const thisConnection = remote;
        remote.addEventListener('disconnect', () => {
          // A connection replaced meanwhile (a retry while the session started) must not clear
          // the handle of the one that replaced it: keys and pastes go through that handle.
          if (remoteRef.current === thisConnection) remoteRef.current = null;
          if (cancelled) return;
          setConnection('reconnecting');
          // Behind the waiting screen the display may simply not be up yet: try again soon.
          const wait = hiddenRef.current ? PRECONNECT_RETRY_MS : backoff(attempt);
          setReconnectAt(Date.now() + wait);
          timer = setTimeout(() => setAttempt((a) => a + 1), wait);
        });
        remote.addEventListener('clipboard', (event) => {
          const text = String((event.detail as { text?: string })?.text ?? '');
          setRemoteClipboard(text);
        });
      },
      () => setConnection('reconnecting'),
    );
    return () => {
      cancelled = true;
      clearTimeout(timer);
      if (remoteRef.current === remote) remoteRef.current = null;
      try {
        remote?.disconnect();
      } catch {
        /* already closed */
      }
    };
    // viewOnly is applied below without reconnecting.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shareBase, linkId, attempt]);

  useEffect(() => {
    if (!remoteRef.current) return;
    remoteRef.current.viewOnly = viewOnly;
    remoteRef.current.resizeSession = !viewOnly;
  }, [viewOnly]);

  // Shown at last: a connection still waiting to retry tries now.
  useEffect(() => {
    if (!hidden && connectionRef.current === 'reconnecting') setAttempt((a) => a + 1);
  }, [hidden]);

  // Round-trip time to the service, shown as connection quality.
  useEffect(() => {
    if (hidden) return;
    let stopped = false;
    const measure = async () => {
      const started = performance.now();
      try {
        const response = await (shareFetch ?? fetch)(`${shareBase}/share/${linkId}/ping`, { cache: 'no-store' });
        await response.arrayBuffer();
        if (!stopped && response.ok) setRttMs(Math.round(performance.now() - started));
      } catch {
        if (!stopped) setRttMs(null);
      }
    };
    void measure();
    const timer = setInterval(measure, 5000);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [shareBase, linkId, shareFetch, hidden]);

  useEffect(() => {
    const onChange = () => setFullscreen(document.fullscreenElement === rootRef.current);
    document.addEventListener('fullscreenchange', onChange);
    return () => document.removeEventListener('fullscreenchange', onChange);
  }, []);

  const toggleFullscreen = useCallback(() => {
    if (document.fullscreenElement) void document.exitFullscreen();
    else void rootRef.current?.requestFullscreen?.();
  }, []);

  /**
   * A key event as a plain X keysym (no scan code: the remote layout decides which key makes it);
   * without `down`, a press and a release.
   */
  const sendKey = useCallback((keysym: number, down?: boolean) => remoteRef.current?.sendKey(keysym, null, down), []);

  /** Presses a key, with the sticky Ctrl/Alt of the on-screen keyboard held around it. */
  const press = useCallback(
    (keysym: number) => {
      if (!remoteRef.current) return;
      const held = (Object.keys(modifiers) as Array<keyof typeof modifiers>).filter((m) => modifiers[m]);
      for (const m of held) sendKey(KEYSYM[m], true);
      sendKey(keysym);
      for (const m of held.reverse()) sendKey(KEYSYM[m], false);
      if (held.length) setModifiers({ Control: false, Alt: false });
    },
    [modifiers, sendKey],
  );

  /**
   * Text (typed, composed by an IME or a dead key, or from a touch keyboard) goes to the remote
   * browser. ASCII goes key by key; any other character may lack a key in the remote layout, and
   * Xvnc's spare-key mapping for it is not reliably read by the remote browser before the key
   * event, so such text goes through the remote clipboard (UTF-8) and Ctrl+V, exactly.
   */
  const sendText = (text: string) => {
    const normal = text.replace(/\r\n?/g, '\n');
    if (/^[\x20-\x7e\n]*$/.test(normal)) {
      for (const character of normal) press(character === '\n' ? KEYSYM.Return : keysymOf(character));
    } else {
      pasteIntoRemote(normal);
    }
  };
  const onTextKeyDown = (event: ReactKeyboardEvent<HTMLTextAreaElement>) => {
    const native = event.nativeEvent;
    // An IME composing, or a dead key waiting for its letter: the text comes with the input events.
    if (native.isComposing || native.keyCode === 229 || event.key === 'Dead' || event.key === 'Process') return;
    // Tab and every other key go to the remote browser; Esc twice in a row is the way out for
    // keyboard users (the remote browser gets both Escs too).
    if (event.key === 'Escape' && !isShortcut(native)) {
      const now = performance.now();
      if (now - lastEscapeAt.current < LEAVE_ESCAPE_MS) {
        lastEscapeAt.current = 0;
        rootRef.current?.querySelector<HTMLElement>('.rbk-viewer__toolbar button')?.focus();
      } else {
        lastEscapeAt.current = now;
      }
    }
    const remote = remoteRef.current;
    if (!remote) return;
    // Ctrl+V (or Cmd+V) pastes the viewer's clipboard: the paste event below sends its text.
    if (isShortcut(native) && event.key.toLowerCase() === 'v') return;
    const special = KEY_KEYSYMS[event.key];
    const typesText = [...event.key].length === 1 && !isShortcut(native);
    if (typesText) return;
    const keysym = special ?? ([...event.key].length === 1 ? keysymOf(event.key.toLowerCase()) : undefined);
    if (keysym === undefined) return;
    event.preventDefault();
    keysDown.current.set(event.code || event.key, keysym);
    sendKey(keysym, true);
  };
  const onTextKeyUp = (event: ReactKeyboardEvent<HTMLTextAreaElement>) => {
    const id = event.code || event.key;
    const keysym = keysDown.current.get(id);
    if (keysym === undefined) return;
    keysDown.current.delete(id);
    sendKey(keysym, false);
  };
  const onTextInput = (event: React.FormEvent<HTMLTextAreaElement>) => {
    const native = event.nativeEvent as InputEvent;
    // Composed text is sent once, whole, when the composition ends.
    if (native.isComposing) return;
    if (native.inputType === 'insertText' || native.inputType === 'insertReplacementText' || native.inputType === undefined) sendText(native.data ?? event.currentTarget.value);
    else if (native.inputType === 'insertLineBreak') press(KEYSYM.Return);
    event.currentTarget.value = '';
  };
  const onCompositionEnd = (event: React.CompositionEvent<HTMLTextAreaElement>) => {
    if (event.data) sendText(event.data);
    event.currentTarget.value = '';
  };
  /** Releases whatever was held when the input loses focus (no key stays down on the remote side). */
  const onTextBlur = () => {
    for (const keysym of keysDown.current.values()) sendKey(keysym, false);
    keysDown.current.clear();
  };

  /** Sets the remote clipboard and presses Ctrl+V there: any text, exactly (the extended clipboard carries UTF-8). */
  const pasteIntoRemote = (text: string) => {
    const remote = remoteRef.current;
    if (!remote || !text) return;
    remote.clipboardPasteFrom(text);
    sendKey(KEYSYM.Control, true);
    sendKey(keysymOf('v'));
    sendKey(KEYSYM.Control, false);
    keyboardRef.current?.focus({ preventScroll: true });
  };

  /** Asks the share API for the session's view-only link and shows it to copy. */
  const shareViewOnly = async () => {
    try {
      const response = await (shareFetch ?? fetch)(`${shareBase}/share/${linkId}/view-only`, { method: 'POST', cache: 'no-store' });
      const answer = (await response.json()) as { status?: string; shareUrl?: unknown };
      if (!response.ok || answer.status !== 'ok' || typeof answer.shareUrl !== 'string' || !isWebAddress(answer.shareUrl)) throw new Error('no link');
      setViewLink({ url: answer.shareUrl });
    } catch {
      setViewLink({ failed: true });
    }
  };

  const quality = rttMs === null ? 'unknown' : rttMs < 100 ? 'good' : rttMs < 300 ? 'fair' : 'poor';
  const statusText = connection === 'connected' ? t('running.connected') : connection === 'connecting' ? t('running.connecting') : t('running.reconnecting', { seconds: reconnectIn });

  return (
    <div ref={rootRef} className="rbk-viewer__live" data-connection={connection} data-fullscreen={fullscreen || undefined} aria-hidden={hidden || undefined}>
      {hidden ? null : (
      <div className="rbk-viewer__toolbar" role="toolbar" aria-label={t('toolbar.label')}>
        <span className="rbk-viewer__connection" role="status" aria-live="polite">
          {statusText}
        </span>
        <span className="rbk-viewer__quality" data-quality={quality} title={t(`running.quality.${quality}`, { ms: rttMs ?? 0 })}>
          <span className="rbk-viewer__quality-dot" aria-hidden="true" />
          <span className="rbk-viewer__quality-text">{t(`running.quality.${quality}`, { ms: rttMs ?? 0 })}</span>
        </span>
        <span className="rbk-viewer__badge" data-control={!viewOnly || undefined}>
          {viewOnly ? t('running.viewOnly') : t('running.canControl')}
        </span>
        {viewers !== null && viewers > 0 ? <span className="rbk-viewer__watching">{t('running.watching', { count: viewers })}</span> : null}
        <span className="rbk-viewer__spacer" />
        {!viewOnly ? (
          <>
            <button type="button" className="rbk-button" aria-expanded={viewLink !== null} onClick={() => (viewLink ? setViewLink(null) : void shareViewOnly())}>
              {t('toolbar.shareViewOnly')}
            </button>
            <button type="button" className="rbk-button" onClick={() => keyboardRef.current?.focus()}>
              {t('toolbar.keyboard')}
            </button>
            <span role="group" aria-label={t('toolbar.keys')} className="rbk-viewer__keys">
              {(['Control', 'Alt'] as const).map((m) => (
                <button key={m} type="button" className="rbk-button" aria-pressed={modifiers[m]} onClick={() => setModifiers((s) => ({ ...s, [m]: !s[m] }))}>
                  {t(m === 'Control' ? 'toolbar.ctrl' : 'toolbar.alt')}
                </button>
              ))}
              <button type="button" className="rbk-button" onClick={() => press(KEYSYM.Escape)}>
                {t('toolbar.esc')}
              </button>
              <button type="button" className="rbk-button" onClick={() => press(KEYSYM.Tab)}>
                {t('toolbar.tab')}
              </button>
            </span>
            <button type="button" className="rbk-button" aria-expanded={pasting} onClick={() => setPasting((p) => !p)}>
              {t('toolbar.paste')}
            </button>
          </>
        ) : null}
        <button type="button" className="rbk-button" aria-pressed={fullscreen} onClick={toggleFullscreen}>
          {fullscreen ? t('toolbar.exitFullscreen') : t('toolbar.fullscreen')}
        </button>
        <button type="button" className="rbk-button" onClick={onLeave}>
          {t('leave')}
        </button>
      </div>
      )}
      {pasting && !hidden ? (
        <form
          className="rbk-viewer__paste"
          onSubmit={(event) => {
            event.preventDefault();
            pasteIntoRemote(pasteText);
            setPasteText('');
            setPasting(false);
          }}
        >
          <label className="rbk-viewer__paste-label">
            {t('toolbar.pasteLabel')}
            <textarea className="rbk-viewer__paste-text" value={pasteText} onChange={(e) => setPasteText(e.target.value)} rows={3} />
          </label>
          <button type="submit" className="rbk-button rbk-button--primary">
            {t('toolbar.pasteSend')}
          </button>
          <button type="button" className="rbk-button" onClick={() => setPasting(false)}>
            {t('toolbar.cancel')}
          </button>
        </form>
      ) : null}
      {viewLink && !hidden ? (
        'failed' in viewLink ? (
          <p className="rbk-viewer__view-link" role="alert">
            {t('toolbar.viewOnlyFailed')}
          </p>
        ) : (
          <div className="rbk-viewer__view-link" role="status">
            <label className="rbk-viewer__view-link-label">
              {t('toolbar.viewOnlyLink')}
              <input className="rbk-viewer__view-link-url" readOnly value={viewLink.url} onFocus={(event) => event.currentTarget.select()} />
            </label>
            <button type="button" className="rbk-button" onClick={() => void navigator.clipboard?.writeText(viewLink.url).catch(() => undefined)}>
              {t('toolbar.copy')}
            </button>
            <span className="rbk-viewer__view-link-note">{t('toolbar.viewOnlyReady')}</span>
          </div>
        )
      ) : null}
      {remoteClipboard && !hidden ? (
        <div className="rbk-viewer__clipboard">
          <span>{t('toolbar.clipboard')}:</span>
          <output className="rbk-viewer__clipboard-text">{remoteClipboard.slice(0, 200)}</output>
          <button type="button" className="rbk-button" onClick={() => void navigator.clipboard?.writeText(remoteClipboard).catch(() => undefined)}>
            {t('toolbar.copy')}
          </button>
        </div>
      ) : null}
      <div
        ref={screenRef}
        className="rbk-viewer__screen"
        role="application"
        aria-label={t('running.region', { browser: browserName })}
        // A press on the remote screen puts the keyboard focus in the viewer's text input.
        onPointerDown={() => {
          if (!viewOnly) keyboardRef.current?.focus({ preventScroll: true });
        }}
      />
      {!viewOnly && !hidden ? (
        <span id={leaveKeysId} className="rbk-viewer__sr-only">
          {t('running.leaveKeys')}
        </span>
      ) : null}
      {!viewOnly && !hidden ? (
        <textarea
          ref={keyboardRef}
          className="rbk-viewer__keyboard-input"
          aria-label={t('running.typeHere')}
          aria-describedby={leaveKeysId}
          autoCapitalize="off"
          autoComplete="off"
          autoCorrect="off"
          spellCheck={false}
          rows={1}
          onKeyDown={onTextKeyDown}
          onKeyUp={onTextKeyUp}
          onInput={onTextInput}
          onCompositionEnd={onCompositionEnd}
          onBlur={onTextBlur}
          // Text pasted here goes to the remote browser's clipboard and is pasted there.
          onPaste={(event) => {
            const text = event.clipboardData.getData('text/plain');
            event.preventDefault();
            if (text) pasteIntoRemote(text);
          }}
        />
      ) : null}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// The component

function ShareViewerScreens({ shareBase, linkId, viewOnly, onStateChange, onLeave, shareFetch }: { shareBase: string | null; linkId: string | null; viewOnly: boolean; onStateChange?: (state: ViewerStateName) => void; onLeave?: (leaveUrl: string) => void; shareFetch?: typeof fetch }) {
  const { state, screen, retryAt } = useViewerState(shareBase, linkId, shareFetch);
  const retryIn = useCountdown(retryAt);
  const lastReported = useRef<Screen | null>(null);
  useEffect(() => {
    if (screen === 'loading' || screen === 'unreachable' || screen === lastReported.current) return;
    lastReported.current = screen;
    onStateChange?.(screen);
  }, [screen, onStateChange]);

  // Only a web address: the service refuses any other callbackUrl (decisions.md 23), and the viewer
  // does not rely on it, since a javascript:, data: or vbscript: one would run in the host page.
  const leaveUrl = (state?.leaveUrl && isWebAddress(state.leaveUrl) ? state.leaveUrl : null) ?? (shareBase ? `${shareBase}/` : null);
  const leave = useCallback(() => {
    if (!leaveUrl) return;
    if (onLeave) onLeave(leaveUrl);
    else window.location.assign(leaveUrl);
  }, [leaveUrl, onLeave]);

  switch (screen) {
    case 'loading':
      return <div className="rbk-viewer__panel" aria-busy="true" />;
    case 'waiting':
    case 'running':
      // One live screen for both: it connects behind the waiting screen, so the remote browser
      // shows the moment the session runs (the same element stays mounted across the switch).
      return (
        <>
          {screen === 'waiting' ? <WaitingScreen browserName={state?.browserName ?? ''} /> : null}
          <LiveScreen
            shareBase={shareBase!}
            linkId={linkId!}
            browserName={state?.browserName ?? ''}
            // A view-only link watches whatever the prop says (the engine passes only watching from it).
            viewOnly={viewOnly || state?.control === false}
            viewers={typeof state?.viewers === 'number' ? state.viewers : null}
            onLeave={leave}
            hidden={screen === 'waiting'}
            {...(shareFetch ? { shareFetch } : {})}
          />
        </>
      );
    case 'ended':
      return <EndScreen kind="ended" onLeave={leaveUrl ? leave : undefined} />;
    case 'gone':
      return <EndScreen kind="gone" onLeave={leaveUrl ? leave : undefined} />;
    case 'unreachable':
      return <EndScreen kind="unreachable" retryIn={retryIn} />;
  }
}

export function ShareViewer({ shareUrl, shareBase, linkId, language, onStateChange, onLeave, viewOnly = false, className, style, fetch: shareFetch }: ShareViewerProps) {
  const link = useMemo(() => {
    if (shareUrl) {
      const parsed = parseShareLink(shareUrl);
      return { base: shareBaseOf(shareUrl), linkId: parsed?.linkId ?? null, language: parsed?.language ?? 'en' };
    }
    return { base: shareBase?.replace(/\/+$/, '') ?? null, linkId: linkId ?? null, language: 'en' as ShareLanguage };
  }, [shareUrl, shareBase, linkId]);
  const lang: ShareLanguage = language && isShareLanguage(language) ? language : link.language;
  const i18n = useMemo(() => createComponentI18n(lang), [lang]);
  const [screen, setScreen] = useState<ViewerStateName | null>(null);
  const report = useCallback(
    (next: ViewerStateName) => {
      setScreen(next);
      onStateChange?.(next);
    },
    [onStateChange],
  );

  return (
    <I18nextProvider i18n={i18n}>
      <div className={['rbk-root', 'rbk-viewer', className].filter(Boolean).join(' ')} style={style} lang={lang} data-state={screen ?? 'loading'}>
        <ShareViewerScreens shareBase={link.base} linkId={link.linkId} viewOnly={viewOnly} onStateChange={report} onLeave={onLeave} {...(shareFetch ? { shareFetch } : {})} />
      </div>
    </I18nextProvider>
  );
}
