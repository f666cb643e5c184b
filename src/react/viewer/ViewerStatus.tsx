// What the viewer says to screen readers as it changes (issue 44, decisions.md 172): the
// connection ("Waking up…", reconnecting), the recording, who drives and whether the remote page
// waits for typing. One visually hidden place that the live screen always renders, whatever its
// toolbar shows (full, compact, one floating button with its sheet closed, or none): a live region
// inside a closed sheet or an absent toolbar would be hidden from assistive technology, and its
// changes never heard. The toolbars show the same words for the eye only.
import { useTranslation } from 'react-i18next';
import type { ConnectionState } from '../../core/reconnect.js';

export interface ViewerStatusProps {
  connection: ConnectionState;
  /** Seconds until the next try while reconnecting. */
  reconnectIn: number;
  /** The session is in standby: connecting wakes it. */
  waking: boolean;
  recording: boolean;
  /** Who drives, as the people panel says it; `null` when the session tells no people. */
  people: string | null;
  /** The remote page has a text field focused (a phone's keyboard follows it). */
  editing: boolean;
}

/** The connection in words, as the status and the toolbar say it. */
export function useConnectionText(connection: ConnectionState, reconnectIn: number, waking: boolean): string {
  const { t } = useTranslation('viewer');
  if (connection === 'connected') return t('running.connected');
  if (connection === 'connecting') return t(waking ? 'running.waking' : 'running.connecting');
  return t('running.reconnecting', { seconds: reconnectIn });
}

export function ViewerStatus({ connection, reconnectIn, waking, recording, people, editing }: ViewerStatusProps) {
  const { t } = useTranslation('viewer');
  const connectionText = useConnectionText(connection, reconnectIn, waking);
  // One region per subject, each always present (a region added with its text is often not read).
  return (
    <div className="rbk-viewer__sr-only rbk-viewer__status">
      <span role="status" aria-live="polite" data-status="connection">
        {connectionText}
      </span>
      <span role="status" aria-live="polite" data-status="recording">
        {recording ? `${t('running.recorded')}: ${t('running.recordedNote')}` : ''}
      </span>
      <span role="status" aria-live="polite" data-status="people">
        {people ?? ''}
      </span>
      <span role="status" aria-live="polite" data-status="editing">
        {editing ? t('touch.editing') : ''}
      </span>
    </div>
  );
}
