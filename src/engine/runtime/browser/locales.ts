// Which interface languages each installed browser can show (Chromium's locale packs, Firefox's
// language packs), and which of them a session's `language` gets: the exact one, else the nearest
// of the same language (decisions.md 42). A language an image cannot show at all is refused.
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** The kinds of browser the engine starts; each reads its interface languages from its own files. */
export type BrowserFamily = 'chromium' | 'firefox';

/** What a browser shows when nothing else is installed: its built-in English. */
export const BUILT_IN_LOCALE = 'en-US';

/**
 * The interface locales an installed browser has. Chromium: `locales/<locale>.pak` beside its
 * executable (Debian's chromium-l10n; only en-US without it). Firefox: its built-in en-US plus the
 * language packs in `browser/extensions/` (Debian's firefox-esr-l10n-*), which Firefox enables
 * from there itself.
 */
export async function installedLocales(family: BrowserFamily, executable: string): Promise<string[]> {
  const dir = dirname(executable);
  if (family === 'chromium') {
    const files = await readdir(join(dir, 'locales')).catch(() => [] as string[]);
    // Each locale also has gendered variants (de_FEMININE.pak): the plain one is the locale.
    const locales = files.map((file) => /^([A-Za-z]{2,3}(?:-[A-Za-z0-9]+)?)\.pak$/.exec(file)?.[1]).filter((l): l is string => l !== undefined);
    return locales.length > 0 ? sortLocales(locales) : [BUILT_IN_LOCALE];
  }
  const files = await readdir(join(dir, 'browser', 'extensions')).catch(() => [] as string[]);
  const packs = files.map((file) => /^langpack-([A-Za-z0-9-]+)@.+\.xpi$/.exec(file)?.[1]).filter((l): l is string => l !== undefined);
  return sortLocales([BUILT_IN_LOCALE, ...packs]);
}

function sortLocales(locales: string[]): string[] {
  return [...new Set(locales)].sort((a, b) => a.localeCompare(b, 'en'));
}

/**
 * Where a bare code or a region an image lacks goes first, when the image has it: the variant
 * most of its speakers use (Chromium makes the same choices for `en`, `pt` and `zh`). Traditional
 * Chinese goes to Traditional Chinese, Latin-American Spanish to Mexican Spanish.
 */
const PREFERRED: Record<string, string[]> = {
  en: ['en-US', 'en-GB'],
  pt: ['pt-BR', 'pt-PT'],
  zh: ['zh-CN', 'zh-TW'],
  'zh-HK': ['zh-TW'],
  'zh-TW': ['zh-TW'],
  es: ['es', 'es-ES', 'es-419', 'es-MX'],
  'es-419': ['es-419', 'es-MX', 'es-AR', 'es-CL', 'es'],
};

const base = (code: string) => code.split('-')[0]!.toLowerCase();
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The locale of `locales` that shows `language`, or null when none does. The exact locale first
 * (`de` -> de, `pt-PT` -> pt-PT); else the nearest of the same language: the preferred variant
 * (`pt` -> pt-BR, `es-419` -> es-MX where there is no es-419), the bare language (`fr-CA` -> fr),
 * any region or script of it (`sv` -> sv-SE, `sr-Latn` -> sr). Another language is never chosen.
 */
export function interfaceLocale(language: string, installed: readonly string[] | undefined): string | null {
  // An image described by hand without its locales shows what every browser has built in.
  const locales = installed && installed.length > 0 ? installed : [BUILT_IN_LOCALE];
  const exact = locales.find((locale) => same(locale, language));
  if (exact) return exact;
  const key = Object.keys(PREFERRED).find((code) => same(code, language));
  for (const preferred of key ? PREFERRED[key]! : []) {
    const found = locales.find((locale) => same(locale, preferred));
    if (found) return found;
  }
  const bare = locales.find((locale) => same(locale, base(language)));
  if (bare) return bare;
  for (const preferred of PREFERRED[base(language)] ?? []) {
    const found = locales.find((locale) => same(locale, preferred));
    if (found) return found;
  }
  return locales.find((locale) => base(locale) === base(language)) ?? null;
}

/** The POSIX form of a locale for gettext's LANGUAGE (GTK's own dialogs): `pt-BR` -> `pt_BR`. */
export function gettextLanguage(locale: string): string {
  return locale.replace('-', '_');
}
