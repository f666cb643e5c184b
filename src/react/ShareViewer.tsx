'use client';
// <ShareViewer>: what whoever holds a share link sees: a waiting screen in the link's language,
// then the remote browser itself through noVNC (mouse, wheel, touch, clipboard; keys and any text
// a person can type, IME and dead keys included, through the viewer's own text input), sized to
// the viewer's area, with its sound, then an ended or gone screen with a way to leave. A view-only
// link (or the viewOnly prop) watches. Sized by its container; no global styles.
import { useCallback, useEffect, useMemo, useRef, useState, type CSSProperties } from 'react';
import { I18nextProvider, useTranslation } from 'react-i18next';
import type { ViewerScreen } from '../core/viewer-state.js';
// Zod-free parts of the protocol only: the viewer must stay small in any host page.
import { isShareLanguage, type ShareLanguage } from '../protocol/languages.js';
import { DEFAULT_VIEWER_TOOLBAR, isWebAddress, offersChannel, parseShareLink, shareBaseOf, type ViewerChrome, type ViewerState, type ViewerStateName, type ViewerToolbarChoice } from '../protocol/share.js';
import type { ShareTab } from '../protocol/tabs.js';
import { createComponentI18n } from './i18n.js';
import { LiveScreen } from './viewer/LiveScreen.js';
import { TabStrip } from './viewer/TabStrip.js';
import { useCountdown } from './viewer/useCountdown.js';
import { useViewerState } from './viewer/useViewerState.js';
import type { PeopleBinding } from './viewer/usePeople.js';
import type { RemoteSound } from './viewer/useRemoteSound.js';

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
  /**
   * Called with the remote browser's tabs each time they change (a tab opened, closed, switched,
   * titled, its icon), in the order they opened; an empty list when the engine no longer tells
   * any (the session ended). Act on them with `actOnTab` from `remote-browser-kit/core`.
   */
  onTabsChange?: (tabs: ShareTab[]) => void;
  /** Called with each viewer state the share API reports (the engine's own words: tabs, control mode, driver, frameOrigins...). */
  onViewerState?: (state: ViewerState) => void;
  /**
   * Called, while the session offers it (issue 36), with who watches and who drives each time it
   * changes, and `request` to ask for control, stop asking, release or take it as this viewer.
   */
  onPeople?: (people: PeopleBinding) => void;
  /** Called, while the session runs, with its sound at this viewer each time that changes (available, muted, volume, blocked) and the way to mute it or set its volume. */
  onSound?: (sound: RemoteSound) => void;
  /** Called when the viewer presses Leave, with where leaving goes. Default: navigate there. */
  onLeave?: (leaveUrl: string) => void;
  /**
   * Watch without sending mouse or keyboard input. A view-only link always watches (the engine
   * passes nothing else from it); this makes a full link watch too.
   */
  viewOnly?: boolean;
  /**
   * A pass that names this viewer to the others (issue 36): from your proxy route's
   * `POST <basePath>/sessions/<handle>/viewer`, for the session's owner. Without it the viewer is "Guest N".
   */
  viewerPass?: string;
  /** `compact` (issue 44): the waiting screen shows its title and progress only, for a viewer framed in another page. Default `full`. */
  chrome?: ViewerChrome;
  /** The live screen's toolbar (issue 44, decisions.md 180): `compact` (default: one row, the rest behind "More"; one floating button on a narrow viewer), `full` (every control laid out, in rows on a wide viewer), `none` (the host gives the commands). */
  toolbar?: ViewerToolbarChoice;
  className?: string;
  style?: CSSProperties;
  /**
   * The fetch for the share API's state reads and the round-trip pings (for example a stand-in in
   * stories or tests). Given one, the viewer polls the state instead of opening an EventSource.
   */
  fetch?: typeof fetch;
}

// ---------------------------------------------------------------------------------------------
// Waiting screen

function WaitingScreen({ browserName, chrome }: { browserName: string; chrome: ViewerChrome }) {
  const { t } = useTranslation('viewer');
  const [seconds, setSeconds] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setSeconds((s) => s + 1), 1000);
    return () => clearInterval(timer);
  }, []);
  return (
    <div className="rbk-viewer__panel">
      <h2 className="rbk-viewer__title">{t('waiting.title')}</h2>
      {chrome === 'full' ? <p className="rbk-viewer__detail">{t('waiting.detail', { browser: browserName })}</p> : null}
      <div className="rbk-viewer__progress" role="progressbar" aria-label={t('waiting.progress')} aria-valuetext={t('waiting.elapsed', { seconds })}>
        <div className="rbk-viewer__progress-bar" />
      </div>
      {chrome === 'full' ? (
        <p className="rbk-viewer__elapsed" aria-hidden="true">
          {t('waiting.elapsed', { seconds })}
        </p>
      ) : null}
      <p className="rbk-viewer__sr-only" role="status" aria-live="polite">
        {t('waiting.status', { browser: browserName })}
      </p>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Ended, gone and unreachable screens

function EndScreen({ kind, onLeave, retryIn, reason }: { kind: 'ended' | 'gone' | 'unreachable'; onLeave?: () => void; retryIn?: number; reason?: string | undefined }) {
  const { t } = useTranslation('viewer');
  const key = kind === 'unreachable' ? 'error' : kind;
  return (
    <div className="rbk-viewer__panel" role={kind === 'unreachable' ? 'alert' : undefined}>
      <h2 className="rbk-viewer__title">{t(`${key}.title`)}</h2>
      <p className="rbk-viewer__detail">{t(`${key}.detail`, { seconds: retryIn ?? 0 })}</p>
      {/* Why a wake or resume failed, in the engine's words (the share state's `reason`, decisions.md 166). */}
      {reason ? <p className="rbk-viewer__detail" lang="en">{reason}</p> : null}
      {onLeave ? (
        <button type="button" className="rbk-button rbk-button--primary" onClick={onLeave}>
          {t('leave')}
        </button>
      ) : null}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// The tabs, for the host page

/** Calls `onTabsChange` when the tabs differ from those it was last called with (none told: an empty list, once some were). */
function useTabsReport(tabs: ShareTab[] | undefined, onTabsChange: ((tabs: ShareTab[]) => void) | undefined) {
  const reported = useRef('[]');
  const text = JSON.stringify(tabs ?? []);
  useEffect(() => {
    if (text === reported.current) return;
    reported.current = text;
    onTabsChange?.(JSON.parse(text) as ShareTab[]);
  }, [text, onTabsChange]);
}

// ---------------------------------------------------------------------------------------------
// The component

type ScreensProps = Pick<ShareViewerProps, 'viewerPass' | 'onStateChange' | 'onTabsChange' | 'onViewerState' | 'onPeople' | 'onSound' | 'onLeave'> & { shareBase: string | null; linkId: string | null; viewOnly: boolean; chrome: ViewerChrome; toolbar: ViewerToolbarChoice; shareFetch?: typeof fetch };

function ShareViewerScreens({ shareBase, linkId, viewOnly, chrome, toolbar, viewerPass, onStateChange, onTabsChange, onViewerState, onPeople, onSound, onLeave, shareFetch }: ScreensProps) {
  const { state, screen, retryAt } = useViewerState(shareBase, linkId, shareFetch);
  useEffect(() => {
    if (state) onViewerState?.(state);
  }, [state, onViewerState]);
  useTabsReport(screen === 'running' ? state?.tabs : undefined, onTabsChange);
  const retryIn = useCountdown(retryAt);
  const lastReported = useRef<ViewerScreen | null>(null);
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
          {screen === 'waiting' ? <WaitingScreen browserName={state?.browserName ?? ''} chrome={chrome} /> : null}
          <LiveScreen
            // Above the toolbar, or in its one row when the toolbar is compact (LiveScreen decides).
            tabStrip={screen === 'running' && state?.tabs ? <TabStrip tabs={state.tabs} mayDrive={!viewOnly && state.control !== false} address={state.appWindow === true} api={{ shareBase: shareBase!, linkId: linkId!, fetch: shareFetch }} /> : null}
            shareBase={shareBase!}
            linkId={linkId!}
            browserName={state?.browserName ?? ''}
            // A view-only link watches whatever the prop says (the engine passes only watching from it).
            viewOnly={viewOnly || state?.control === false}
            viewers={typeof state?.viewers === 'number' ? state.viewers : null}
            recording={state?.recording === true}
            waking={state?.standby === true}
            // The channels the session is offered (an engine from before sound says nothing: no sound).
            sound={offersChannel(state, 'sound')}
            video={offersChannel(state, 'video')}
            editing={offersChannel(state, 'editing')}
            onLeave={leave}
            hidden={screen === 'waiting'}
            people={offersChannel(state, 'people')}
            viewerPass={viewerPass}
            onPeople={onPeople}
            onSound={onSound}
            toolbar={toolbar}
            {...(shareFetch ? { shareFetch } : {})}
          />
        </>
      );
    case 'ended':
      return <EndScreen kind="ended" onLeave={leaveUrl ? leave : undefined} reason={state?.reason} />;
    case 'gone':
      return <EndScreen kind="gone" onLeave={leaveUrl ? leave : undefined} />;
    case 'unreachable':
      return <EndScreen kind="unreachable" retryIn={retryIn} />;
  }
}

export function ShareViewer({ shareUrl, shareBase, linkId, language, onStateChange, onTabsChange, onViewerState, onPeople, onSound, onLeave, viewOnly = false, viewerPass, chrome = 'full', toolbar = DEFAULT_VIEWER_TOOLBAR, className, style, fetch: shareFetch }: ShareViewerProps) {
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
      <div className={['rbk-root', 'rbk-viewer', className].filter(Boolean).join(' ')} style={style} lang={lang} data-state={screen ?? 'loading'} data-chrome={chrome} data-toolbar={toolbar}>
        <ShareViewerScreens shareBase={link.base} linkId={link.linkId} viewOnly={viewOnly} chrome={chrome} toolbar={toolbar} viewerPass={viewerPass} onStateChange={report} onTabsChange={onTabsChange} onViewerState={onViewerState} onPeople={onPeople} onSound={onSound} onLeave={onLeave} {...(shareFetch ? { shareFetch } : {})} />
      </div>
    </I18nextProvider>
  );
}
