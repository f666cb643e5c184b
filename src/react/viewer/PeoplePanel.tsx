// Who watches the session and who drives it (issue 36): a toolbar button that opens the list of
// people (their names or "Guest N", who has control, who asks, who only watches), the viewer's
// own requests (ask, withdraw, give to someone who asks, release, and take for the owner), a
// status line screen readers hear when control moves, and the driver's pointer over the screen.
import { useId, useRef, useState, type RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import type { PeopleSnapshot } from '../../core/people.js';
import type { ControlClientMessage, Driver, Person } from '../../protocol/control.js';

export interface PeoplePanelProps {
  snapshot: PeopleSnapshot;
  /** Sends one of the viewer's requests to the engine. */
  onRequest: (message: ControlClientMessage) => void;
  /** Starts open (stories). */
  defaultOpen?: boolean;
  /**
   * Whether its status line is a live region (default). The live screen says who drives in its own
   * status (ViewerStatus), heard even when this panel sits in a closed sheet; there it is false.
   */
  announce?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Names

/** A person's name as the viewer shows it: the app's name, "Guest N", or "Program". */
export function useDisplayName(): (person: Pick<Person, 'kind' | 'name' | 'guest'> | Driver) => string {
  const { t } = useTranslation('viewer');
  return (person) => person.name ?? (person.kind === 'program' ? t('people.program') : t('people.guest', { n: person.guest ?? 0 }));
}

/** Who drives, in the words the panel's status line shows; `null` before the engine told anyone. */
export function usePeopleStatus(snapshot: PeopleSnapshot): string | null {
  const { t } = useTranslation('viewer');
  const nameOf = useDisplayName();
  const picture = snapshot.picture;
  if (!picture) return null;
  const me = picture.people.find((person) => person.id === picture.you);
  const driver = picture.driver;
  if (picture.mode !== 'one') return t('people.everyone');
  if (driver?.id === picture.you) return t('people.youDrive');
  if (driver === null) return t(me !== undefined && me.watching !== true ? 'people.nobodyDrives' : 'people.nobody');
  return driver.id === 'owner' ? t('people.ownerHolds') : t('people.driverIs', { name: nameOf(driver) });
}

// ---------------------------------------------------------------------------------------------
// Panel

export function PeoplePanel({ snapshot, onRequest, defaultOpen = false, announce = true }: PeoplePanelProps) {
  const { t } = useTranslation('viewer');
  const [open, setOpen] = useState(defaultOpen);
  const listId = useId();
  const toggle = useRef<HTMLButtonElement>(null);
  const nameOf = useDisplayName();
  const status = usePeopleStatus(snapshot);
  const picture = snapshot.picture;
  if (!picture) return null;
  const me = picture.people.find((person) => person.id === picture.you);
  const one = picture.mode === 'one';
  const driver = picture.driver;
  const iDrive = one && driver?.id === picture.you;
  const iOwn = me?.owner === true;
  const canDrive = me !== undefined && me.watching !== true;
  const driverName = driver ? (driver.id === 'owner' ? null : nameOf(driver)) : null;
  // The viewer's own request (its label is `people.<request>`).
  const action: { request: 'release' | 'take' | 'cancel' | 'ask'; primary: boolean } = iDrive
    ? { request: 'release', primary: false }
    : iOwn
      ? { request: 'take', primary: true }
      : me?.asks
        ? { request: 'cancel', primary: false }
        : { request: 'ask', primary: true };
  return (
    <div className="rbk-viewer__people" data-state={open ? 'open' : 'closed'} data-mode={picture.mode}>
      <button ref={toggle} type="button" className="rbk-button" aria-expanded={open} aria-controls={listId} onClick={() => setOpen((o) => !o)}>
        {t('people.button', { count: picture.people.length })}
      </button>
      {/* Heard whenever control moves, panel open or not (said by the live screen's status when it holds the panel). */}
      {announce ? (
        <p className="rbk-viewer__people-status" role="status" aria-live="polite">
          {status}
        </p>
      ) : (
        <p className="rbk-viewer__people-status" aria-hidden="true">
          {status}
        </p>
      )}
      {open ? (
        <div
          id={listId}
          className="rbk-viewer__people-panel"
          role="region"
          aria-label={t('people.label')}
          onKeyDown={(event) => {
            if (event.key !== 'Escape') return;
            setOpen(false);
            toggle.current?.focus();
          }}
        >
          <ul className="rbk-viewer__people-list">
            {picture.people.map((person) => {
              const name = nameOf(person);
              const drives = one && driver?.id === person.id;
              return (
                <li key={person.id} className="rbk-viewer__person" data-drives={drives || undefined} data-asks={person.asks || undefined}>
                  <span className="rbk-viewer__person-name">{person.id === picture.you ? t('people.you', { name }) : name}</span>
                  {person.owner && person.kind === 'person' ? <span className="rbk-viewer__person-tag"> · {t('people.owner')}</span> : null}
                  {drives ? <span className="rbk-viewer__person-tag"> · {t('people.drives')}</span> : null}
                  {person.asks ? <span className="rbk-viewer__person-tag"> · {t('people.asks')}</span> : null}
                  {person.watching ? <span className="rbk-viewer__person-tag"> · {t('people.watching')}</span> : null}
                  {one && person.asks && (iDrive || iOwn) ? (
                    <button type="button" className="rbk-button" onClick={() => onRequest({ type: 'give', to: person.id })}>
                      {t('people.give', { name })}
                    </button>
                  ) : null}
                </li>
              );
            })}
          </ul>
          {one && canDrive ? (
            <div className="rbk-viewer__people-actions">
              {/* One button whose request follows the state, so the keyboard's focus stays on it (ask, then withdraw). */}
              {!iDrive && !iOwn && me?.asks ? (
                <p className="rbk-viewer__people-note">{t('people.waiting', { seconds: Math.round((picture.idleMs ?? 30_000) / 1000), name: driverName ?? t('people.owner') })}</p>
              ) : null}
              <button type="button" className={`rbk-button${action.primary ? ' rbk-button--primary' : ''}`} onClick={() => onRequest({ type: action.request })}>
                {t(`people.${action.request}`)}
              </button>
            </div>
          ) : null}
          {snapshot.refused ? (
            <p className="rbk-viewer__people-note" role="alert">
              {snapshot.refused}
            </p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// The driver's pointer, over the remote screen (display pixels scaled to the canvas shown)

export function DriverPointer({ snapshot, screenRef }: { snapshot: PeopleSnapshot; screenRef: RefObject<HTMLElement | null> }) {
  const { t } = useTranslation('viewer');
  const nameOf = useDisplayName();
  const { picture, pointer } = snapshot;
  const driver = picture?.driver;
  const canvas = screenRef.current?.querySelector('canvas');
  if (!picture || picture.mode !== 'one' || !driver || driver.id === picture.you || !pointer || !canvas || !canvas.width) return null;
  const screen = screenRef.current!.getBoundingClientRect();
  const shown = canvas.getBoundingClientRect();
  const left = shown.left - screen.left + (pointer.x * shown.width) / canvas.width;
  const top = shown.top - screen.top + (pointer.y * shown.height) / canvas.height;
  return (
    <div className="rbk-viewer__driver-pointer" style={{ left, top }} aria-hidden="true" title={t('people.pointer', { name: nameOf(driver) })}>
      <span className="rbk-viewer__driver-pointer-name">{nameOf(driver)}</span>
    </div>
  );
}
