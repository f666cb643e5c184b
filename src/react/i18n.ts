// The components' own i18next instance (never the host's): every namespace in the seven
// languages, bundled, so a share link renders in its language without a request.
import { createInstance, type i18n as I18n } from 'i18next';
import { SHARE_LANGUAGES, type ShareLanguage } from '../protocol/languages.js';
import deViewer from '../../locales/de/viewer.json' with { type: 'json' };
import deLauncher from '../../locales/de/launcher.json' with { type: 'json' };
import deMeters from '../../locales/de/meters.json' with { type: 'json' };
import deReplay from '../../locales/de/replay.json' with { type: 'json' };
import enViewer from '../../locales/en/viewer.json' with { type: 'json' };
import enLauncher from '../../locales/en/launcher.json' with { type: 'json' };
import enMeters from '../../locales/en/meters.json' with { type: 'json' };
import enReplay from '../../locales/en/replay.json' with { type: 'json' };
import esViewer from '../../locales/es/viewer.json' with { type: 'json' };
import esLauncher from '../../locales/es/launcher.json' with { type: 'json' };
import esMeters from '../../locales/es/meters.json' with { type: 'json' };
import esReplay from '../../locales/es/replay.json' with { type: 'json' };
import frViewer from '../../locales/fr/viewer.json' with { type: 'json' };
import frLauncher from '../../locales/fr/launcher.json' with { type: 'json' };
import frMeters from '../../locales/fr/meters.json' with { type: 'json' };
import frReplay from '../../locales/fr/replay.json' with { type: 'json' };
import itViewer from '../../locales/it/viewer.json' with { type: 'json' };
import itLauncher from '../../locales/it/launcher.json' with { type: 'json' };
import itMeters from '../../locales/it/meters.json' with { type: 'json' };
import itReplay from '../../locales/it/replay.json' with { type: 'json' };
import jaViewer from '../../locales/ja/viewer.json' with { type: 'json' };
import jaLauncher from '../../locales/ja/launcher.json' with { type: 'json' };
import jaMeters from '../../locales/ja/meters.json' with { type: 'json' };
import jaReplay from '../../locales/ja/replay.json' with { type: 'json' };
import ptViewer from '../../locales/pt/viewer.json' with { type: 'json' };
import ptLauncher from '../../locales/pt/launcher.json' with { type: 'json' };
import ptMeters from '../../locales/pt/meters.json' with { type: 'json' };
import ptReplay from '../../locales/pt/replay.json' with { type: 'json' };

export const resources = {
  en: { viewer: enViewer, launcher: enLauncher, meters: enMeters, replay: enReplay },
  de: { viewer: deViewer, launcher: deLauncher, meters: deMeters, replay: deReplay },
  fr: { viewer: frViewer, launcher: frLauncher, meters: frMeters, replay: frReplay },
  es: { viewer: esViewer, launcher: esLauncher, meters: esMeters, replay: esReplay },
  it: { viewer: itViewer, launcher: itLauncher, meters: itMeters, replay: itReplay },
  pt: { viewer: ptViewer, launcher: ptLauncher, meters: ptMeters, replay: ptReplay },
  ja: { viewer: jaViewer, launcher: jaLauncher, meters: jaMeters, replay: jaReplay },
} satisfies Record<ShareLanguage, Record<string, unknown>>;

/** A fresh instance in `language`; synchronous (resources are bundled). */
export function createComponentI18n(language: ShareLanguage): I18n {
  const instance = createInstance();
  void instance.init({
    lng: language,
    fallbackLng: 'en',
    supportedLngs: [...SHARE_LANGUAGES],
    resources,
    ns: ['viewer', 'launcher', 'meters', 'replay'],
    defaultNS: 'viewer',
    interpolation: { escapeValue: false },
    initAsync: false,
    showSupportNotice: false,
  } as Parameters<I18n['init']>[0]);
  return instance;
}
