'use client';
// <SessionLauncher>'s launched session: its progress from starting to running, the share link
// (copy, open), ending it, its files, and starting another once it has ended.
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ProxyCreateResponse } from '../../core/index.js';
import { isSessionEnded, type SessionStatus } from '../../protocol/statuses.js';
import { useEndSession } from '../hooks/useEndSession.js';
import { useSession } from '../hooks/useSession.js';
import { LaunchedFiles } from './LaunchedFiles.js';
import { LaunchError } from './LaunchError.js';

export interface LaunchedSession {
  handle: string;
  status: SessionStatus | 'starting';
  shareUrl: string | undefined;
}

export function LaunchedPanel({ created, browserName, onOpenViewer, onSessionChange, onAnother }: { created: ProxyCreateResponse; browserName: string; onOpenViewer?: (url: string) => void; onSessionChange?: (session: LaunchedSession) => void; onAnother: () => void }) {
  const { t } = useTranslation('launcher');
  const session = useSession(created.handle);
  const end = useEndSession();
  const [copied, setCopied] = useState(false);
  const status = (session.data?.status ?? 'starting') as SessionStatus;
  const ended = isSessionEnded(status) || status === 'error';
  // The latest callback, read when the session changes: a host passing a new function on every
  // render (an inline arrow that sets its state) is told about changes, not about its renders.
  const onSessionChangeRef = useRef(onSessionChange);
  useLayoutEffect(() => {
    onSessionChangeRef.current = onSessionChange;
  });
  useEffect(() => {
    onSessionChangeRef.current?.({ handle: created.handle, status, shareUrl: created.shareUrl });
  }, [created.handle, created.shareUrl, status]);

  const copy = async () => {
    if (!created.shareUrl) return;
    try {
      await navigator.clipboard.writeText(created.shareUrl);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };

  return (
    <div className="rbk-launcher__session" data-status={status}>
      <p className="rbk-launcher__status" role="status" aria-live="polite">
        {ended ? t('status.ended') : status === 'running' ? t('status.running', { browser: browserName }) : t('status.starting', { browser: browserName })}
      </p>
      {status === 'starting' ? (
        <div className="rbk-viewer__progress" role="progressbar" aria-label={t('progress')}>
          <div className="rbk-viewer__progress-bar" />
        </div>
      ) : null}
      {session.error ? <LaunchError error={session.error} retryIn={0} onRetry={() => void session.refetch()} /> : null}
      {!ended && created.shareUrl ? (
        <div className="rbk-launcher__share">
          <label className="rbk-launcher__field">
            <span className="rbk-launcher__label">{t('shareLink')}</span>
            <input className="rbk-launcher__input" readOnly value={created.shareUrl} onFocus={(e) => e.currentTarget.select()} />
          </label>
          <div className="rbk-launcher__actions">
            <button type="button" className="rbk-button" onClick={() => void copy()}>
              {t('copy')}
            </button>
            {onOpenViewer ? (
              <button type="button" className="rbk-button" onClick={() => onOpenViewer(created.shareUrl!)}>
                {t('openViewer')}
              </button>
            ) : (
              <a className="rbk-button" href={created.shareUrl} target="_blank" rel="noopener noreferrer">
                {t('openViewer')}
              </a>
            )}
            <button type="button" className="rbk-button" onClick={() => end.mutate(created.handle)} disabled={end.isPending} aria-busy={end.isPending || undefined}>
              {end.isPending ? t('ending') : t('end')}
            </button>
          </div>
          <span className="rbk-viewer__sr-only" role="status" aria-live="polite">
            {copied ? t('copied') : ''}
          </span>
        </div>
      ) : null}
      <LaunchedFiles handle={created.handle} running={status === 'running'} />
      {end.error ? <LaunchError error={end.error} retryIn={0} onRetry={() => end.mutate(created.handle)} /> : null}
      {ended ? (
        <button type="button" className="rbk-button rbk-button--primary" onClick={onAnother}>
          {t('another')}
        </button>
      ) : null}
    </div>
  );
}

