'use client';
// <SessionLauncher>'s failure message: what went wrong and what to do, a retry where one helps
// (after a rate limit's countdown), the host's call to action for an upgrade.
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { RemoteBrowserClientError } from '../../core/index.js';

/** Seconds until a rate limit lifts, ticking. */
export function useRetryCountdown(error: unknown): number {
  const until = useMemo(() => (error instanceof RemoteBrowserClientError && error.code === 'rate_limited' ? Date.now() + (error.retryAfter ?? 1) * 1000 : 0), [error]);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!until) return;
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(timer);
  }, [until]);
  return until ? Math.max(0, Math.ceil((until - now) / 1000)) : 0;
}

export function LaunchError({ error, retryIn, onRetry, renderUpgrade }: { error: unknown; retryIn: number; onRetry: () => void; renderUpgrade?: (message: string) => ReactNode }) {
  const { t } = useTranslation('launcher');
  const failure = error instanceof RemoteBrowserClientError ? error : new RemoteBrowserClientError('service_error', String((error as Error)?.message ?? error));
  if (failure.code === 'denied' && failure.field) return null; // shown on its field
  let text: string;
  let retry = false;
  switch (failure.code) {
    case 'denied':
      text = t('errors.deniedGeneral', { message: failure.message });
      break;
    case 'upgrade':
      text = t('errors.upgrade', { message: failure.message });
      break;
    case 'rate_limited':
      text = t('errors.rateLimited', { seconds: retryIn });
      retry = true;
      break;
    case 'insecure':
      text = t('errors.insecure', { message: failure.message });
      break;
    case 'unauthorized':
      text = t('errors.unauthorized');
      break;
    case 'network':
      text = t('errors.network');
      retry = true;
      break;
    default:
      text = t('errors.error', { message: failure.message });
      retry = true;
  }
  return (
    <div className="rbk-launcher__error" role="alert" data-code={failure.code}>
      <p className="rbk-launcher__error-text">{text}</p>
      {failure.code === 'upgrade' && renderUpgrade ? <div className="rbk-launcher__upgrade">{renderUpgrade(failure.message)}</div> : null}
      {retry ? (
        <button type="button" className="rbk-button" onClick={onRetry} disabled={failure.code === 'rate_limited' && retryIn > 0}>
          {t('retry')}
        </button>
      ) : null}
    </div>
  );
}

