// The live screen: the remote browser through noVNC, the viewer's own text input that carries
// keys and text to it, the session's sound, the toolbar, and the panels it opens (paste, the
// view-only link, the remote clipboard). Mounted behind the waiting screen too (`hidden`), so it is connected when the
// session runs.
import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { requestViewOnlyLink } from '../../core/share-api.js';
import { DEFAULT_VIEWER_TOOLBAR, type ViewerToolbarChoice } from '../../protocol/share.js';
import { useCountdown } from './useCountdown.js';
import { useFullscreen } from './useFullscreen.js';
import { useRemoteKeyboard } from './useRemoteKeyboard.js';
import { useRemoteScreen } from './useRemoteScreen.js';
import { useRemoteSound, type RemoteSound } from './useRemoteSound.js';
import { useRoundTrip } from './useRoundTrip.js';
import { ViewerToolbar } from './ViewerToolbar.js';
import { FilesControl } from './FilesControl.js';
import { useTouchGestures } from './useTouchGestures.js';
import { useTouchKeyboard } from './useTouchKeyboard.js';
import { ZoomControl } from './ZoomControl.js';
import { DriverPointer, PeoplePanel, usePeopleStatus } from './PeoplePanel.js';
import { ViewerStatus } from './ViewerStatus.js';
import { usePeople, type PeopleBinding } from './usePeople.js';
import { useNarrowViewer } from './useNarrowViewer.js';

export interface LiveScreenProps {
  shareBase: string;
  linkId: string;
  browserName: string;
  viewOnly: boolean;
  viewers: number | null;
  /** The session is being recorded: the toolbar says so. */
  recording?: boolean;
  /** The session is in standby (the state's `standby`): while connecting, the toolbar says it is waking up. */
  waking?: boolean;
  /** Whether the session has sound (the share API says). */
  sound: boolean;
  /** Whether the engine offers video while the display moves (the share API says). */
  video?: boolean;
  /** Whether the engine tells when a text field in the session has the focus (the state's `editing`): a phone's keyboard then follows it. */
  editing?: boolean;
  onLeave: () => void;
  shareFetch?: typeof fetch;
  /** Behind the waiting screen: connected, but nothing of it shows. */
  hidden: boolean;
  /** The session offers the `people` route (issue 36): who watches, who drives. */
  people?: boolean;
  /** A pass from the owner's handle that names this viewer (ShareViewer's `viewerPass`). */
  viewerPass?: string | undefined;
  /** Called with who watches and drives each time it changes, and the way to ask for control (ShareViewer's `onPeople`). */
  onPeople?: ((people: PeopleBinding) => void) | undefined;
  /** Called with the sound at this viewer each time it changes, while the live screen shows (ShareViewer's `onSound`). */
  onSound?: ((sound: RemoteSound) => void) | undefined;
  /**
   * The toolbar: one row (`compact`, the default), every control laid out (`full`), or none
   * (ShareViewer's `toolbar`). `full` in a viewer 560 px wide or less (a phone, a small frame) is
   * shown as `compact`: one floating button.
   */
  toolbar?: ViewerToolbarChoice;
  /** The remote browser's tabs (TabStrip): a row above the toolbar, or inside the compact toolbar's one row. */
  tabStrip?: ReactNode;
}

/** The view-only link as the toolbar asked for it. */
type ViewLink = { url: string } | { failed: true } | null;

export function LiveScreen({ shareBase, linkId, browserName, viewOnly, viewers, recording = false, waking = false, sound, video = false, editing = false, onLeave, shareFetch, hidden, people: offersPeople = false, viewerPass, onPeople, onSound, toolbar: chosen = DEFAULT_VIEWER_TOOLBAR, tabStrip = null }: LiveScreenProps) {
  const { t } = useTranslation('viewer');
  const rootRef = useRef<HTMLDivElement>(null);
  const screenRef = useRef<HTMLDivElement>(null);
  const keyboardRef = useRef<HTMLTextAreaElement>(null);
  const leaveKeysId = useId();
  const [pasting, setPasting] = useState(false);
  // Kept while the paste panel is closed: reopened, it shows what was typed.
  const [pasteText, setPasteText] = useState('');
  const [viewLink, setViewLink] = useState<ViewLink>(null);

  const people = usePeople({ shareBase, linkId, pass: viewerPass, enabled: offersPeople });
  const { snapshot: peopleSnapshot, request: peopleRequest } = people;
  const peopleRequestRef = useRef(peopleRequest);
  peopleRequestRef.current = peopleRequest;
  useEffect(() => {
    if (offersPeople) onPeople?.({ snapshot: peopleSnapshot, request: (message) => peopleRequestRef.current(message) });
  }, [offersPeople, peopleSnapshot, onPeople]);
  const { connection, reconnectAt, remoteClipboard, remote, showingVideo } = useRemoteScreen({ shareBase, linkId, viewerKey: people.viewerKey, viewOnly, video, hidden, screenRef });
  const reconnectIn = useCountdown(reconnectAt);
  const remoteSound = useRemoteSound({ shareBase, linkId, sound, hidden, rootRef });
  const soundRef = useRef(remoteSound);
  soundRef.current = remoteSound;
  useEffect(() => {
    if (hidden || !onSound) return;
    const now = soundRef.current;
    onSound({ ...now, setMuted: (muted) => soundRef.current.setMuted(muted), setVolume: (volume) => soundRef.current.setVolume(volume), resume: () => soundRef.current.resume() });
  }, [hidden, onSound, remoteSound.available, remoteSound.muted, remoteSound.volume, remoteSound.blocked]);
  const rttMs = useRoundTrip(shareBase, linkId, shareFetch, !hidden);
  const { fullscreen, toggleFullscreen } = useFullscreen(rootRef);
  // On a phone (or in a small frame) the full toolbar's rows would take a third of the screen: one floating button instead.
  const narrow = useNarrowViewer(rootRef);
  const toolbar = chosen === 'full' && narrow ? 'compact' : chosen;
  const compact = toolbar === 'compact';
  // Who watches and drives: its own row, or a button in the compact toolbar's one row.
  // Its status line is for the eye: ViewerStatus says who drives, even with the panel in a closed sheet.
  const peoplePanel = offersPeople && !hidden ? <PeoplePanel snapshot={people.snapshot} onRequest={people.request} announce={false} /> : null;
  const peopleStatus = usePeopleStatus(people.snapshot);
  // Esc twice moves the keyboard focus out of the remote screen, to the toolbar.
  const leaveKeyboard = useCallback(() => rootRef.current?.querySelector<HTMLElement>('.rbk-viewer__toolbar button')?.focus(), []);
  const keyboard = useRemoteKeyboard({ remote, keyboardRef, onLeaveKeys: leaveKeyboard });
  // Touch (issue 36): a pinch zooms this view only; the phone's keyboard follows the remote focus.
  const touch = useTouchGestures({ screenRef, remote, viewOnly, connection });
  const touchKeyboard = useTouchKeyboard({ shareBase, linkId, told: editing, viewOnly, hidden, keyboardRef });

  /** Asks the share API for the session's view-only link and shows it to copy. */
  const shareViewOnly = () =>
    requestViewOnlyLink({ shareBase, linkId, fetch: shareFetch }).then(
      (url) => setViewLink({ url }),
      () => setViewLink({ failed: true }),
    );

  return (
    <div ref={rootRef} className="rbk-viewer__live" data-connection={connection} data-video={showingVideo || undefined} data-fullscreen={fullscreen || undefined} data-zoom={touch.zoom > 1 ? touch.zoom.toFixed(2) : undefined} data-toolbar={toolbar} aria-hidden={hidden || undefined}>
      {/* What screen readers hear as it changes, whatever the toolbar shows (decisions.md 172). */}
      {hidden ? null : <ViewerStatus connection={connection} reconnectIn={reconnectIn} waking={waking} recording={recording} people={offersPeople ? peopleStatus : null} editing={!viewOnly && touchKeyboard.remoteEditing} />}
      {compact ? null : tabStrip}
      {hidden || toolbar === 'none' ? null : (
        <ViewerToolbar
          compact={compact}
          floating={compact && narrow}
          tabs={compact ? tabStrip : null}
          people={compact ? peoplePanel : null}
          connection={connection}
          reconnectIn={reconnectIn}
          rttMs={rttMs}
          viewOnly={viewOnly}
          viewers={viewers}
          recording={recording}
          waking={waking}
          viewLinkShown={viewLink !== null}
          onViewLink={() => (viewLink ? setViewLink(null) : void shareViewOnly())}
          onKeyboard={touchKeyboard.open}
          modifiers={keyboard.modifiers}
          onModifier={keyboard.toggleModifier}
          onPress={keyboard.press}
          pasting={pasting}
          onPaste={() => setPasting((p) => !p)}
          sound={remoteSound}
          files={<FilesControl shareBase={shareBase} linkId={linkId} viewOnly={viewOnly} hidden={hidden} dropRef={rootRef} />}
          fullscreen={fullscreen}
          onFullscreen={toggleFullscreen}
          onLeave={onLeave}
        />
      )}
      {pasting && !hidden ? (
        <PastePanel
          text={pasteText}
          onText={setPasteText}
          onSend={() => {
            keyboard.pasteIntoRemote(pasteText);
            setPasteText('');
            setPasting(false);
          }}
          onCancel={() => setPasting(false)}
        />
      ) : null}
      {compact ? null : peoplePanel}
      {viewLink && !hidden ? <ViewLinkPanel viewLink={viewLink} /> : null}
      {remoteClipboard && !hidden ? <RemoteClipboardPanel text={remoteClipboard} /> : null}
      <div
        ref={screenRef}
        className="rbk-viewer__screen"
        role="application"
        aria-label={t('running.region', { browser: browserName })}
        // A press on the remote screen puts the keyboard focus in the viewer's text input.
        onPointerDown={() => {
          if (viewOnly) return;
          touchKeyboard.pressed();
          keyboardRef.current?.focus({ preventScroll: true });
        }}
      />
      {hidden ? null : <ZoomControl zoom={touch.zoom} onReset={touch.resetZoom} />}
      {offersPeople && !hidden ? <DriverPointer snapshot={people.snapshot} screenRef={screenRef} /> : null}
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
          inputMode={touchKeyboard.inputMode}
          {...keyboard.inputProps}
        />
      ) : null}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Paste panel: text typed or pasted here goes to the remote clipboard and is pasted there

function PastePanel({ text, onText, onSend, onCancel }: { text: string; onText: (text: string) => void; onSend: () => void; onCancel: () => void }) {
  const { t } = useTranslation('viewer');
  return (
    <form
      className="rbk-viewer__paste"
      onSubmit={(event) => {
        event.preventDefault();
        onSend();
      }}
    >
      <label className="rbk-viewer__paste-label">
        {t('toolbar.pasteLabel')}
        <textarea className="rbk-viewer__paste-text" value={text} onChange={(e) => onText(e.target.value)} rows={3} />
      </label>
      <button type="submit" className="rbk-button rbk-button--primary">
        {t('toolbar.pasteSend')}
      </button>
      <button type="button" className="rbk-button" onClick={onCancel}>
        {t('toolbar.cancel')}
      </button>
    </form>
  );
}

// ---------------------------------------------------------------------------------------------
// View-only link panel: the link to copy, or why there is none

function ViewLinkPanel({ viewLink }: { viewLink: { url: string } | { failed: true } }) {
  const { t } = useTranslation('viewer');
  if ('failed' in viewLink) {
    return (
      <p className="rbk-viewer__view-link" role="alert">
        {t('toolbar.viewOnlyFailed')}
      </p>
    );
  }
  return (
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
  );
}

// ---------------------------------------------------------------------------------------------
// Remote clipboard panel: what the remote browser copied, to copy here

function RemoteClipboardPanel({ text }: { text: string }) {
  const { t } = useTranslation('viewer');
  return (
    <div className="rbk-viewer__clipboard">
      <span>{t('toolbar.clipboard')}:</span>
      <output className="rbk-viewer__clipboard-text">{text.slice(0, 200)}</output>
      <button type="button" className="rbk-button" onClick={() => void navigator.clipboard?.writeText(text).catch(() => undefined)}>
        {t('toolbar.copy')}
      </button>
    </div>
  );
}
