'use client';
// <SessionLauncher>'s saved profile (issue 34): start fresh, on one of the user's profiles for the
// chosen browser, or on a new one made here; whether the session's state is written back at its
// end, and its open tabs with it. A route that keeps no profiles shows the line that says so, and
// the launch goes on without one.
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useCreateProfile, useProfiles } from '../hooks/useProfiles.js';

/** What the launch sends as `profile`: the profile's handle, or '' for none. */
export interface ProfileChoice {
  handle: string;
  save: boolean;
  tabs: boolean;
}

export const NO_PROFILE: ProfileChoice = { handle: '', save: true, tabs: false };

const NEW = '__new__';

export function ProfilePicker({ browser, value, onChange, invalid }: { browser: string; value: ProfileChoice; onChange: (choice: ProfileChoice) => void; invalid?: { describedBy: string } | undefined }) {
  const { t } = useTranslation('launcher');
  const id = useId();
  const profiles = useProfiles();
  const create = useCreateProfile();
  const [making, setMaking] = useState(false);
  const [name, setName] = useState('');
  const fitting = (profiles.data ?? []).filter((profile) => profile.browser === browser);

  const make = () => {
    if (!name.trim()) return;
    create.mutate({ name: name.trim(), browser }, {
      onSuccess: (made) => {
        setMaking(false);
        setName('');
        onChange({ ...value, handle: made.handle });
      },
    });
  };

  if (profiles.error) return <p className="rbk-launcher__hint" role="status">{t('profile.loadError')}</p>;
  return (
    <div className="rbk-launcher__profile" data-state={profiles.isPending ? 'loading' : making ? 'making' : value.handle ? 'chosen' : 'none'}>
      <div className="rbk-launcher__field">
        <label className="rbk-launcher__label" htmlFor={`${id}-profile`}>{t('profile.label')}</label>
        <select
          id={`${id}-profile`}
          className="rbk-launcher__input"
          value={making ? NEW : value.handle}
          disabled={profiles.isPending}
          onChange={(event) => {
            const chosen = event.target.value;
            setMaking(chosen === NEW);
            if (chosen !== NEW) onChange({ ...value, handle: chosen });
          }}
          {...(invalid ? { 'aria-invalid': true, 'aria-describedby': invalid.describedBy } : {})}
        >
          <option value="">{t('profile.none')}</option>
          {fitting.map((profile) => (
            <option key={profile.handle} value={profile.handle}>
              {profile.name}
            </option>
          ))}
          <option value={NEW}>{t('profile.new')}</option>
        </select>
      </div>
      {making ? (
        <div className="rbk-launcher__row">
          <label className="rbk-launcher__field">
            <span className="rbk-launcher__label">{t('profile.newName')}</span>
            <input className="rbk-launcher__input" value={name} maxLength={83} onChange={(event) => setName(event.target.value)} onKeyDown={(event) => {
              if (event.key === 'Enter') {
                event.preventDefault();
                make();
              }
            }} />
          </label>
          <button type="button" className="rbk-button" onClick={make} disabled={!name.trim() || create.isPending} aria-busy={create.isPending || undefined}>
            {create.isPending ? t('profile.creating') : t('profile.create')}
          </button>
        </div>
      ) : null}
      {create.error ? <p className="rbk-launcher__field-error" role="alert">{t('profile.createError', { message: create.error.message })}</p> : null}
      {value.handle && !making ? (
        <>
          <p className="rbk-launcher__hint">{t('profile.hint')}</p>
          <label className="rbk-launcher__check">
            <input type="checkbox" checked={value.save} onChange={(event) => onChange({ ...value, save: event.target.checked })} />
            <span>{t('profile.save')}</span>
          </label>
          <label className="rbk-launcher__check">
            <input type="checkbox" checked={value.tabs} onChange={(event) => onChange({ ...value, tabs: event.target.checked })} />
            <span>{t('profile.tabs')}</span>
          </label>
        </>
      ) : null}
    </div>
  );
}
