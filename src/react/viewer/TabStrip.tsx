'use client';
// The remote browser's tabs above the live screen (issue 36): a tablist sized for fingers (each tab
// and button at least 44 px high), the one the browser shows marked selected. A link that may
// drive switches a tab (click, Enter or Space), closes one (its × or Delete) and opens one (+); a
// view-only link sees the same tabs, and its strip says it cannot change them. Arrow keys, Home and
// End move between tabs (one tab stop for the strip, as a tablist has). Each tab shows its page's
// icon when the engine told one: a data: image it fetched inside the session, never an address on
// the web (a viewer loads nothing from the sites the session visits; decisions.md 112).
// In an app window (the state's `appWindow`), which has no address bar of its own, the strip shows
// the shown tab's address in a field: a link that may drive edits it and Enter takes the tab there
// (`{action:"go"}`); a view-only link reads it (issue 44, decisions.md 174).
import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { actOnTab, type ShareApiTarget } from '../../core/share-api.js';
import { isFavicon, type ShareTab, type TabAction } from '../../protocol/tabs.js';

export interface TabStripProps {
  /** The tabs as the share API's state tells them, in the order they opened. */
  tabs: ShareTab[];
  /** Whether this link may switch, close and open tabs (false: a view-only link). */
  mayDrive: boolean;
  /** The link's share API, where actions go. */
  api: ShareApiTarget;
  /** Show the shown tab's address (an app window has no address bar of its own): editable when `mayDrive`, else read-only. */
  address?: boolean;
}

/** What a person typed, as an address: one without a scheme is an https address, as a browser's address bar takes it. */
function typedAddress(text: string): string {
  const trimmed = text.trim();
  return /^[a-z][a-z0-9+.-]*:/i.test(trimmed) ? trimmed : `https://${trimmed}`;
}

/** A tab's name as shown: its title, else its address's host, else "New tab". */
function tabName(tab: ShareTab, untitled: string): string {
  if (tab.title.trim()) return tab.title;
  try {
    const url = new URL(tab.url);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.host;
  } catch {
    // Not an address: the browser's own page.
  }
  return untitled;
}

export function TabStrip({ tabs, mayDrive, api, address = false }: TabStripProps) {
  const { t } = useTranslation('viewer');
  // The browser's answer to the last action shows at once; the next state replaces it.
  const [answered, setAnswered] = useState<ShareTab[] | null>(null);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [focused, setFocused] = useState<string | null>(null);
  const refs = useRef(new Map<string, HTMLDivElement>());
  useEffect(() => setAnswered(null), [tabs]);
  const shown = answered ?? tabs;
  const active = shown.find((tab) => tab.active) ?? shown[0];
  const stop = focused && shown.some((tab) => tab.id === focused) ? focused : active?.id;

  // The address being typed (null: the field shows the shown tab's).
  const [draft, setDraft] = useState<string | null>(null);

  const act = async (action: TabAction): Promise<boolean> => {
    if (!mayDrive || busy) return false;
    setBusy(true);
    setRefusal(null);
    try {
      setAnswered(await actOnTab(api, action));
      return true;
    } catch (error) {
      setRefusal(t('tabs.refused', { message: (error as Error).message }));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>, index: number) => {
    const tab = shown[index]!;
    const move = (to: number) => {
      const next = shown[(to + shown.length) % shown.length]!;
      setFocused(next.id);
      refs.current.get(next.id)?.focus();
    };
    if (event.key === 'ArrowRight') move(index + 1);
    else if (event.key === 'ArrowLeft') move(index - 1);
    else if (event.key === 'Home') move(0);
    else if (event.key === 'End') move(shown.length - 1);
    else if (event.key === 'Enter' || event.key === ' ') void act({ action: 'switch', tab: tab.id });
    else if (event.key === 'Delete' && shown.length > 1) void act({ action: 'close', tab: tab.id });
    else return;
    event.preventDefault();
  };

  return (
    <div className="rbk-viewer__tabs" data-view-only={!mayDrive || undefined} aria-busy={busy || undefined}>
      <div className="rbk-viewer__tablist" role="tablist" aria-label={t('tabs.label')}>
        {shown.map((tab, index) => {
          const name = tabName(tab, t('tabs.untitled'));
          return (
            <div key={tab.id} className="rbk-viewer__tab" data-state={tab.active ? 'active' : 'inactive'}>
              <div
                ref={(element) => void (element ? refs.current.set(tab.id, element) : refs.current.delete(tab.id))}
                role="tab"
                className="rbk-viewer__tab-name"
                aria-selected={tab.active}
                aria-disabled={!mayDrive || undefined}
                aria-keyshortcuts={mayDrive && shown.length > 1 ? 'Delete' : undefined}
                tabIndex={tab.id === stop ? 0 : -1}
                title={tab.url || name}
                onClick={() => void act({ action: 'switch', tab: tab.id })}
                onKeyDown={(event) => onKeyDown(event, index)}
                onFocus={() => setFocused(tab.id)}
              >
                {isFavicon(tab.favicon) ? <img className="rbk-viewer__tab-icon" src={tab.favicon} alt="" width={16} height={16} draggable={false} /> : null}
                <span className="rbk-viewer__tab-title">{name}</span>
              </div>
              {mayDrive && shown.length > 1 ? (
                // For pointers only: a tablist holds tabs alone, so the keyboard (and a screen
                // reader) closes a tab with Delete, which the tab announces as its shortcut.
                <button type="button" className="rbk-viewer__tab-close" tabIndex={-1} aria-hidden="true" title={t('tabs.close', { title: name })} onClick={() => void act({ action: 'close', tab: tab.id })}>
                  ×
                </button>
              ) : null}
            </div>
          );
        })}
      </div>
      {address && active ? (
        <form
          className="rbk-viewer__address"
          onSubmit={(event) => {
            event.preventDefault();
            if (!mayDrive || draft === null || !draft.trim()) return;
            void act({ action: 'go', tab: active.id, url: typedAddress(draft) }).then((went) => went && setDraft(null));
          }}
        >
          <input
            className="rbk-viewer__address-input"
            aria-label={t('tabs.address')}
            value={draft ?? active.url}
            readOnly={!mayDrive}
            inputMode="url"
            enterKeyHint="go"
            autoCapitalize="off"
            autoComplete="off"
            autoCorrect="off"
            spellCheck={false}
            onFocus={(event) => event.currentTarget.select()}
            onChange={(event) => mayDrive && setDraft(event.currentTarget.value)}
            onBlur={() => setDraft(null)}
            onKeyDown={(event) => {
              if (event.key !== 'Escape' || draft === null) return;
              event.preventDefault();
              setDraft(null);
            }}
          />
        </form>
      ) : null}
      {mayDrive ? (
        <button type="button" className="rbk-viewer__tab-open" aria-label={t('tabs.open')} title={t('tabs.open')} onClick={() => void act({ action: 'open' })}>
          +
        </button>
      ) : (
        <span className="rbk-viewer__tabs-note">{t('tabs.viewOnly')}</span>
      )}
      <span className="rbk-viewer__tabs-refusal" role="status">
        {refusal}
      </span>
    </div>
  );
}
