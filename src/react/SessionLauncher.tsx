'use client';
// <SessionLauncher>: choose a browser and where it starts, launch through the proxy route, see it
// go from starting to running, then share, open and end it. Every failure says what to do.
import { useEffect, useId, useLayoutEffect, useMemo, useRef, useState, type CSSProperties, type FormEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { RemoteBrowserClientError, type ProxyCreateResponse } from '../core/index.js';
import { BROWSER_LANGUAGES, KEYBOARD_LAYOUTS, SHARE_LANGUAGES, type ShareLanguage } from '../protocol/languages.js';
import { isSessionEnded, type SessionStatus } from '../protocol/statuses.js';
import type { CreateRequest } from '../protocol/index.js';
import { useCreateSession } from './hooks/useCreateSession.js';
import { useEndSession } from './hooks/useEndSession.js';
import { useImages } from './hooks/useImages.js';
import { useSession } from './hooks/useSession.js';
import { useRemoteBrowser } from './RemoteBrowserProvider.js';
import { LaunchedFiles } from './launcher/LaunchedFiles.js';

export interface LaunchedSession {
  handle: string;
  status: SessionStatus | 'starting';
  shareUrl: string | undefined;
}

export interface SessionLauncherProps {
  /** Start page filled in at first. */
  defaultUrl?: string;
  /** Offer exit locations. Default: when the service lists any. Set false when the plan has none. */
  locations?: boolean;
  /** Your call to action for an `upgrade` answer (a plan that includes it resolves it). */
  renderUpgrade?: (message: string) => ReactNode;
  /** Called when a session is launched and whenever its status changes. */
  onSessionChange?: (session: LaunchedSession) => void;
  /** "Open viewer": default opens the share link in a new tab. */
  onOpenViewer?: (shareUrl: string) => void;
  className?: string;
  style?: CSSProperties;
}

interface FormState {
  browser: string;
  url: string;
  country: string;
  city: string;
  residential: boolean;
  language: string;
  layout: string;
  shareLanguage: ShareLanguage;
}

const newLaunchId = () => (globalThis.crypto?.randomUUID?.() ?? `${Date.now()}-${Math.random().toString(36).slice(2)}`);

/** Seconds until a rate limit lifts, ticking. */
function useRetryCountdown(error: unknown): number {
  const until = useMemo(() => (error instanceof RemoteBrowserClientError && error.code === 'rate_limited' ? Date.now() + (error.retryAfter ?? 1) * 1000 : 0), [error]);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!until) return;
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(timer);
  }, [until]);
  return until ? Math.max(0, Math.ceil((until - now) / 1000)) : 0;
}

function displayName(kind: 'language', code: string, locale: string): string {
  try {
    return new Intl.DisplayNames([locale], { type: kind }).of(code) ?? code;
  } catch {
    return code;
  }
}

// ---------------------------------------------------------------------------------------------
// Failure message

function LaunchError({ error, retryIn, onRetry, renderUpgrade }: { error: unknown; retryIn: number; onRetry: () => void; renderUpgrade?: (message: string) => ReactNode }) {
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

// ---------------------------------------------------------------------------------------------
// The launched session: progress, share link, open, end

function LaunchedPanel({ created, browserName, onOpenViewer, onSessionChange, onAnother }: { created: ProxyCreateResponse; browserName: string; onOpenViewer?: (url: string) => void; onSessionChange?: (session: LaunchedSession) => void; onAnother: () => void }) {
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

// ---------------------------------------------------------------------------------------------
// The component

export function SessionLauncher({ defaultUrl = '', locations, renderUpgrade, onSessionChange, onOpenViewer, className, style }: SessionLauncherProps) {
  const { t } = useTranslation('launcher');
  const { language: uiLanguage } = useRemoteBrowser();
  const images = useImages();
  const create = useCreateSession();
  const id = useId();
  const launchId = useRef(newLaunchId());
  const [form, setForm] = useState<FormState>({ browser: '', url: defaultUrl, country: '', city: '', residential: false, language: uiLanguage, layout: 'us', shareLanguage: uiLanguage });
  const retryIn = useRetryCountdown(create.error);

  const available = images.data?.images ?? [];
  const browser = form.browser || available.find((i) => i.enabled)?.id || '';
  const locationList = images.data?.vpnLocations ?? [];
  const showLocations = (locations ?? locationList.length > 0) && locationList.length > 0;
  const country = locationList.find((l) => l.code === form.country);
  const residentialOffered = images.data?.residential.configured === true;

  const update = <K extends keyof FormState>(key: K, value: FormState[K]) => {
    setForm((f) => ({ ...f, [key]: value, ...(key === 'country' ? { city: '' } : {}) }));
    // A changed request is a new launch: it must not be answered with an earlier one's session.
    launchId.current = newLaunchId();
    if (create.error) create.reset();
  };

  const request = (): CreateRequest => ({
    browser,
    ...(form.url.trim() ? { url: form.url.trim() } : {}),
    language: form.language,
    layout: form.layout,
    shareLanguage: form.shareLanguage,
    ...(showLocations && form.country ? { country: form.country === 'auto' ? 'auto' : form.city || form.country } : {}),
    ...(residentialOffered && form.residential ? { egress: 'residential' as const } : {}),
  });

  const launch = (event?: FormEvent) => {
    event?.preventDefault();
    create.mutate({ request: request(), launchId: launchId.current });
  };

  const fieldError = create.error instanceof RemoteBrowserClientError && create.error.code === 'denied' ? create.error.field : undefined;
  const errorFor = (field: string) =>
    fieldError === field
      ? { 'aria-invalid': true as const, 'aria-describedby': `${id}-${field}-error` }
      : {};
  const fieldMessage = (field: string) =>
    fieldError === field ? (
      <span id={`${id}-${field}-error`} className="rbk-launcher__field-error" role="alert">
        {t('errors.denied', { message: (create.error as Error).message })}
      </span>
    ) : null;

  const root = ['rbk-root', 'rbk-launcher', className].filter(Boolean).join(' ');
  if (create.data) {
    const name = available.find((i) => i.id === browser)?.name ?? browser;
    return (
      <section className={root} style={style} aria-labelledby={`${id}-title`} data-state="launched">
        <h2 id={`${id}-title`} className="rbk-launcher__title">
          {t('title')}
        </h2>
        <LaunchedPanel
          created={create.data}
          browserName={name}
          onSessionChange={onSessionChange}
          onAnother={() => {
            launchId.current = newLaunchId();
            create.reset();
          }}
          {...(onOpenViewer ? { onOpenViewer } : {})}
        />
      </section>
    );
  }

  return (
    <section className={root} style={style} aria-labelledby={`${id}-title`} data-state={images.isPending ? 'loading' : create.isPending ? 'launching' : create.error ? 'error' : 'ready'}>
      <h2 id={`${id}-title`} className="rbk-launcher__title">
        {t('title')}
      </h2>
      {images.error ? (
        <div role="alert" className="rbk-launcher__error">
          <p className="rbk-launcher__error-text">
            {images.error instanceof RemoteBrowserClientError && images.error.code === 'unauthorized' ? t('errors.unauthorized') : t('errors.images')}
          </p>
          <button type="button" className="rbk-button" onClick={() => void images.refetch()}>
            {t('retry')}
          </button>
        </div>
      ) : null}
      <form className="rbk-launcher__form" onSubmit={launch} aria-busy={images.isPending || create.isPending || undefined}>
        <div className="rbk-launcher__field">
          <label className="rbk-launcher__label" htmlFor={`${id}-browser`}>{t('browser')}</label>
          <select id={`${id}-browser`} className="rbk-launcher__input" value={browser} onChange={(e) => update('browser', e.target.value)} disabled={images.isPending} {...errorFor('browser')}>
            {available.map((image) => (
              <option key={image.id} value={image.id} disabled={!image.enabled}>
                {image.enabled ? image.name : t('browserUnavailable', { name: image.name })}
              </option>
            ))}
          </select>
          {fieldMessage('browser')}
        </div>
        <div className="rbk-launcher__field">
          <label className="rbk-launcher__label" htmlFor={`${id}-url`}>{t('url')}</label>
          <input id={`${id}-url`} className="rbk-launcher__input" type="url" inputMode="url" placeholder="https://" value={form.url} onChange={(e) => update('url', e.target.value)} aria-describedby={fieldError === 'url' ? `${id}-url-error` : `${id}-url-hint`} {...(fieldError === 'url' ? { 'aria-invalid': true } : {})} />
          <span id={`${id}-url-hint`} className="rbk-launcher__hint">
            {t('urlHint')}
          </span>
          {fieldMessage('url')}
        </div>
        {showLocations ? (
          <div className="rbk-launcher__row">
            <div className="rbk-launcher__field">
              <label className="rbk-launcher__label" htmlFor={`${id}-country`}>{t('location')}</label>
              <select id={`${id}-country`} className="rbk-launcher__input" value={form.country} onChange={(e) => update('country', e.target.value)} {...errorFor('country')}>
                <option value="">{t('locationDefault')}</option>
                <option value="auto">{t('locationAuto')}</option>
                {locationList.map((location) => (
                  <option key={location.code} value={location.code}>
                    {location.name}
                  </option>
                ))}
              </select>
              {fieldMessage('country')}
            </div>
            {country ? (
              <label className="rbk-launcher__field">
                <span className="rbk-launcher__label">{t('city')}</span>
                <select className="rbk-launcher__input" value={form.city} onChange={(e) => update('city', e.target.value)}>
                  <option value="">{t('cityDefault')}</option>
                  {country.cities.map((city) => (
                    <option key={city.code} value={city.code}>
                      {city.location}
                    </option>
                  ))}
                </select>
              </label>
            ) : null}
          </div>
        ) : locations === false ? (
          <p className="rbk-launcher__hint">{t('locationNotIncluded')}</p>
        ) : null}
        {residentialOffered ? (
          <div className="rbk-launcher__field">
            <label className="rbk-launcher__check">
              <input type="checkbox" checked={form.residential} onChange={(e) => update('residential', e.target.checked)} {...errorFor('egress')} />
              <span>{t('residential')}</span>
            </label>
            {fieldMessage('egress')}
          </div>
        ) : null}
        <details className="rbk-launcher__options">
          <summary>{t('options')}</summary>
          <div className="rbk-launcher__row">
            <div className="rbk-launcher__field">
              <label className="rbk-launcher__label" htmlFor={`${id}-language`}>{t('language')}</label>
              <select id={`${id}-language`} className="rbk-launcher__input" value={form.language} onChange={(e) => update('language', e.target.value)} {...errorFor('language')}>
                {BROWSER_LANGUAGES.map((code) => (
                  <option key={code} value={code}>
                    {displayName('language', code, uiLanguage)}
                  </option>
                ))}
              </select>
              {fieldMessage('language')}
            </div>
            <div className="rbk-launcher__field">
              <label className="rbk-launcher__label" htmlFor={`${id}-layout`}>{t('layout')}</label>
              <select id={`${id}-layout`} className="rbk-launcher__input" value={form.layout} onChange={(e) => update('layout', e.target.value)} {...errorFor('layout')}>
                {KEYBOARD_LAYOUTS.map((code) => (
                  <option key={code} value={code}>
                    {code}
                  </option>
                ))}
              </select>
              {fieldMessage('layout')}
            </div>
            <label className="rbk-launcher__field">
              <span className="rbk-launcher__label">{t('shareLanguage')}</span>
              <select className="rbk-launcher__input" value={form.shareLanguage} onChange={(e) => update('shareLanguage', e.target.value as ShareLanguage)}>
                {SHARE_LANGUAGES.map((code) => (
                  <option key={code} value={code}>
                    {displayName('language', code, code)}
                  </option>
                ))}
              </select>
            </label>
          </div>
        </details>
        {create.error ? <LaunchError error={create.error} retryIn={retryIn} onRetry={() => launch()} {...(renderUpgrade ? { renderUpgrade } : {})} /> : null}
        <button type="submit" className="rbk-button rbk-button--primary" disabled={!browser || create.isPending || retryIn > 0} aria-busy={create.isPending || undefined}>
          {create.isPending ? t('launching') : t('launch')}
        </button>
      </form>
    </section>
  );
}
