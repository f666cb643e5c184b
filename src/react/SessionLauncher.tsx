'use client';
// <SessionLauncher>: choose a browser and where it starts, launch through the proxy route, see it
// go from starting to running, then share, open and end it. Every failure says what to do.
import { useId, useRef, useState, type CSSProperties, type FormEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { RemoteBrowserClientError } from '../core/index.js';
import { BROWSER_LANGUAGES, KEYBOARD_LAYOUTS, SHARE_LANGUAGES, type ShareLanguage } from '../protocol/languages.js';
import type { CreateRequest } from '../protocol/index.js';
import { useCreateSession } from './hooks/useCreateSession.js';
import { useImages } from './hooks/useImages.js';
import { useRemoteBrowser } from './RemoteBrowserProvider.js';
import { LaunchedPanel, type LaunchedSession } from './launcher/LaunchedPanel.js';
import { LaunchError, useRetryCountdown } from './launcher/LaunchError.js';
import { NO_PROFILE, ProfilePicker, type ProfileChoice } from './launcher/ProfilePicker.js';

export type { LaunchedSession };

export interface SessionLauncherProps {
  /** Start page filled in at first. */
  defaultUrl?: string;
  /** Offer exit locations. Default: when the service lists any. Set false when the plan has none. */
  locations?: boolean;
  /** Your call to action for an `upgrade` answer (a plan that includes it resolves it). */
  renderUpgrade?: (message: string) => ReactNode;
  /**
   * Offer the user's saved profiles (issue 34): start fresh, on one of them, or on a new one, and
   * whether the session's state is written back. Default false: the route must keep profiles.
   */
  profiles?: boolean;
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

function displayName(kind: 'language', code: string, locale: string): string {
  try {
    return new Intl.DisplayNames([locale], { type: kind }).of(code) ?? code;
  } catch {
    return code;
  }
}

// ---------------------------------------------------------------------------------------------
// The component

export function SessionLauncher({ defaultUrl = '', locations, profiles = false, renderUpgrade, onSessionChange, onOpenViewer, className, style }: SessionLauncherProps) {
  const { t } = useTranslation('launcher');
  const { language: uiLanguage } = useRemoteBrowser();
  const images = useImages();
  const create = useCreateSession();
  const id = useId();
  const launchId = useRef(newLaunchId());
  const [form, setForm] = useState<FormState>({ browser: '', url: defaultUrl, country: '', city: '', residential: false, language: uiLanguage, layout: 'us', shareLanguage: uiLanguage });
  const retryIn = useRetryCountdown(create.error);
  const [profile, setProfile] = useState<ProfileChoice>(NO_PROFILE);

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
    ...(profiles && profile.handle ? { profile: { id: profile.handle, save: profile.save, tabs: profile.tabs } } : {}),
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
        {profiles && browser ? (
          <>
            <ProfilePicker
              browser={browser}
              value={profile}
              onChange={(choice) => {
                setProfile(choice);
                launchId.current = newLaunchId();
                if (create.error) create.reset();
              }}
              invalid={fieldError === 'profile' ? { describedBy: `${id}-profile-error` } : undefined}
            />
            {fieldMessage('profile')}
          </>
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
