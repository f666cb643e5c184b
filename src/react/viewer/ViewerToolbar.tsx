// The live screen's toolbar: connection state and quality, what this link lets its holder do,
// who watches, and the controls (view-only link, keyboard, sticky keys, paste, sound, full screen,
// leave), and the session's files (FilesControl.tsx). Compact (the default, decisions.md 180), it is
// one row that also holds the remote browser's tabs, who watches and drives, and the files, with the
// input controls behind "More" (issue 44); on a phone one floating button.
import { useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { ConnectionState } from '../../core/reconnect.js';
import { connectionQuality } from '../../core/share-api.js';
import { KEYSYM, type StickyModifier } from '../../core/keyboard.js';
import { SoundControl } from './SoundControl.js';
import { useConnectionText } from './ViewerStatus.js';
import { FLOATING_CORNERS, readFloatingCorner, writeFloatingCorner, type FloatingCorner } from './floating-corner.js';
import { useCornerDrag } from './useCornerDrag.js';
import type { StickyModifiers } from './useRemoteKeyboard.js';
import type { RemoteSound } from './useRemoteSound.js';

export interface ViewerToolbarProps {
  connection: ConnectionState;
  /** Seconds until the next try while reconnecting. */
  reconnectIn: number;
  /** Round-trip time to the share API; `null` while unknown. */
  rttMs: number | null;
  viewOnly: boolean;
  /** Viewers connected now (every link together); `null` when the share API did not say. */
  viewers: number | null;
  /** The session is being recorded (the share state's `recording`): everyone watching is told. */
  recording?: boolean;
  /** The session is in standby (the share state's `standby`): connecting wakes it, and the status says so. */
  waking?: boolean;
  /** Whether the view-only link (or its failure) shows. */
  viewLinkShown: boolean;
  onViewLink: () => void;
  onKeyboard: () => void;
  modifiers: StickyModifiers;
  onModifier: (modifier: StickyModifier) => void;
  /** Presses a key on the remote side (with the sticky modifiers). */
  onPress: (keysym: number) => void;
  pasting: boolean;
  onPaste: () => void;
  /** The files control (downloads and uploads), for a link that controls. */
  files?: ReactNode;
  /** The session's sound and the listener's mute and volume. */
  sound: RemoteSound;
  fullscreen: boolean;
  onFullscreen: () => void;
  onLeave: () => void;
  /**
   * One row (issue 44): the connection as a dot, sound, full screen, leave, and "More" for the
   * rest; in a narrow viewer (a phone) one floating button that opens them all as a sheet.
   */
  compact?: boolean;
  /** The remote browser's tabs (TabStrip), in the compact row (the full toolbar leaves them to their own row). */
  tabs?: ReactNode;
  /** Who watches and drives (PeoplePanel), in the compact row (the full toolbar leaves it to its own row). */
  people?: ReactNode;
  /**
   * The compact toolbar is one floating button (a viewer 560 px wide or less): it can be dragged to
   * another corner, or placed from its sheet, and the corner is remembered (decisions.md 173).
   */
  floating?: boolean;
}

export function ViewerToolbar(props: ViewerToolbarProps) {
  const { t } = useTranslation('viewer');
  const { connection, rttMs, viewOnly, viewers, modifiers, fullscreen } = props;
  const quality = connectionQuality(rttMs);
  // Written for the eye only: the live screen's status (ViewerStatus) says it to screen readers,
  // whatever this toolbar shows (decisions.md 172).
  const statusText = useConnectionText(connection, props.reconnectIn, props.waking === true);
  const [more, setMore] = useState(false);
  if (props.compact) return <CompactToolbar {...props} statusText={statusText} quality={quality} more={more} onMore={() => setMore((open) => !open)} />;

  return (
    <div className="rbk-viewer__toolbar" role="toolbar" aria-label={t('toolbar.label')}>
      {/* ---------------------------------------------------------------- Status */}
      <span className="rbk-viewer__connection" aria-hidden="true">
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
      {props.recording ? (
        <span className="rbk-viewer__recorded" title={t('running.recordedNote')} aria-hidden="true">
          <span className="rbk-viewer__recorded-dot" />
          {t('running.recorded')}
        </span>
      ) : null}
      <span className="rbk-viewer__spacer" />
      {/* ---------------------------------------------------------------- Controls (a link that controls) */}
      {!viewOnly ? <InputControls {...props} /> : null}
      {/* ---------------------------------------------------------------- Every viewer */}
      <EveryViewerControls {...props} />
    </div>
  );
}

/** What every viewer has, whatever its link: sound, full screen, leave. */
function EveryViewerControls(props: ViewerToolbarProps) {
  const { t } = useTranslation('viewer');
  return (
    <>
      <SoundControl sound={props.sound} />
      <button type="button" className="rbk-button" aria-pressed={props.fullscreen} onClick={props.onFullscreen}>
        {props.fullscreen ? t('toolbar.exitFullscreen') : t('toolbar.fullscreen')}
      </button>
      <button type="button" className="rbk-button" onClick={props.onLeave}>
        {t('leave')}
      </button>
    </>
  );
}

/** The controls that send input (a link that controls): the view-only link, keyboard, keys, paste, files. */
function InputControls(props: ViewerToolbarProps) {
  const { t } = useTranslation('viewer');
  const { modifiers } = props;
  return (
        <>
          <button type="button" className="rbk-button" aria-expanded={props.viewLinkShown} onClick={props.onViewLink}>
            {t('toolbar.shareViewOnly')}
          </button>
          <button type="button" className="rbk-button" onClick={props.onKeyboard}>
            {t('toolbar.keyboard')}
          </button>
          <span role="group" aria-label={t('toolbar.keys')} className="rbk-viewer__keys">
            {(['Control', 'Alt'] as const).map((m) => (
              <button key={m} type="button" className="rbk-button" aria-pressed={modifiers[m]} onClick={() => props.onModifier(m)}>
                {t(m === 'Control' ? 'toolbar.ctrl' : 'toolbar.alt')}
              </button>
            ))}
            <button type="button" className="rbk-button" onClick={() => props.onPress(KEYSYM.Escape)}>
              {t('toolbar.esc')}
            </button>
            <button type="button" className="rbk-button" onClick={() => props.onPress(KEYSYM.Tab)}>
              {t('toolbar.tab')}
            </button>
          </span>
          <button type="button" className="rbk-button" aria-expanded={props.pasting} onClick={props.onPaste}>
            {t('toolbar.paste')}
          </button>
          {props.files}
        </>
  );
}

/** The compact toolbar: one row, or on a phone a floating button (styles.css, `data-toolbar='compact'`); its sheet holds the rest. */
function CompactToolbar(props: ViewerToolbarProps & { statusText: string; quality: string; more: boolean; onMore: () => void }) {
  const { t } = useTranslation('viewer');
  const { rttMs, viewOnly, more } = props;
  // The floating button's corner (styles.css places it only in a narrow viewer, where it floats).
  const [corner, setCorner] = useState<FloatingCorner>(readFloatingCorner);
  const place = (next: FloatingCorner) => {
    setCorner(next);
    writeFloatingCorner(next);
  };
  const drag = useCornerDrag(props.floating === true, place);
  return (
    <div
      className="rbk-viewer__toolbar"
      data-toolbar="compact"
      data-open={more || undefined}
      data-corner={corner}
      data-dragging={drag.offset ? '' : undefined}
      style={drag.offset ? { transform: `translate(${drag.offset.x}px, ${drag.offset.y}px)` } : undefined}
      role="toolbar"
      aria-label={t('toolbar.label')}
    >
      <span className="rbk-viewer__quality" data-quality={props.quality} title={`${props.statusText} · ${t(`running.quality.${props.quality}`, { ms: rttMs ?? 0 })}`}>
        <span className="rbk-viewer__quality-dot" aria-hidden="true" />
      </span>
      {/* Recorded, in words in the one row too: everyone watching is told (decisions.md 180). */}
      {props.recording ? (
        <span className="rbk-viewer__recorded" title={t('running.recordedNote')} aria-hidden="true">
          <span className="rbk-viewer__recorded-dot" />
          {t('running.recorded')}
        </span>
      ) : null}
      {/* A viewer that only watches says so in the one row too (a link that controls is the usual case). */}
      {viewOnly ? <span className="rbk-viewer__badge">{t('running.viewOnly')}</span> : null}
      {props.tabs ?? <span className="rbk-viewer__spacer" />}
      {props.people}
      {/* Files stay in the row, not in the sheet: mounted while the sheet is closed, they follow
          what arrives (the count on the button, the announcement) and take files dropped on the viewer. */}
      {!viewOnly ? props.files : null}
      <span className="rbk-viewer__always">
        <EveryViewerControls {...props} />
      </span>
      {props.floating && more ? (
        // Where the floating button sits, for the keyboard (and anyone who does not drag).
        <span role="group" aria-label={t('toolbar.place')} className="rbk-viewer__place">
          {FLOATING_CORNERS.map((option) => (
            <button key={option} type="button" className="rbk-button" aria-pressed={corner === option} onClick={() => place(option)}>
              {t(`toolbar.corner.${option}`)}
            </button>
          ))}
        </span>
      ) : null}
      <button
        type="button"
        className="rbk-button rbk-viewer__more"
        aria-expanded={more}
        data-input={!viewOnly || undefined}
        {...drag.handlers}
        onClick={() => {
          if (!drag.consumeDrag()) props.onMore();
        }}
      >
        {t('toolbar.more')}
      </button>
      {!viewOnly && more ? (
        <div className="rbk-viewer__sheet">
          <InputControls {...props} files={null} />
        </div>
      ) : null}
    </div>
  );
}
