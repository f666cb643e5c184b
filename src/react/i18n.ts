// The components' own i18next instance (never the host's): every namespace in the seven
// languages, bundled, so a share link renders in its language without a request.
import { createInstance, type i18n as I18n } from 'i18next';
import { SHARE_LANGUAGES, type ShareLanguage } from '../protocol/index.js';
import de from '../../locales/de/viewer.json' with { type: 'json' };
import en from '../../locales/en/viewer.json' with { type: 'json' };
import es from '../../locales/es/viewer.json' with { type: 'json' };
import fr from '../../locales/fr/viewer.json' with { type: 'json' };
import it from '../../locales/it/viewer.json' with { type: 'json' };
import ja from '../../locales/ja/viewer.json' with { type: 'json' };
import pt from '../../locales/pt/viewer.json' with { type: 'json' };

export const resources = {
  en: { viewer: en },
  de: { viewer: de },
  fr: { viewer: fr },
  es: { viewer: es },
  it: { viewer: it },
  pt: { viewer: pt },
  ja: { viewer: ja },
} satisfies Record<ShareLanguage, Record<string, unknown>>;

/** A fresh instance in `language`; synchronous (resources are bundled). */
export function createComponentI18n(language: ShareLanguage): I18n {
  const instance = createInstance();
  void instance.init({
    lng: language,
    fallbackLng: 'en',
    supportedLngs: [...SHARE_LANGUAGES],
    resources,
    ns: ['viewer'],
    defaultNS: 'viewer',
    interpolation: { escapeValue: false },
    initAsync: false,
    showSupportNotice: false,
  } as Parameters<I18n['init']>[0]);
  return instance;
}
