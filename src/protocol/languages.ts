// The languages and keyboard layouts a session accepts: viewer languages for share links, browser
// interface languages for `language`, X keyboard layouts for `layout`.

/** Viewer languages of the share link's `<lang>` segment and of `shareLanguage`. */
export const SHARE_LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'pt', 'ja'] as const;
export type ShareLanguage = (typeof SHARE_LANGUAGES)[number];
export const DEFAULT_SHARE_LANGUAGE: ShareLanguage = 'en';

export function isShareLanguage(value: unknown): value is ShareLanguage {
  return (SHARE_LANGUAGES as readonly unknown[]).includes(value);
}

/**
 * Browser interface languages: Chromium's UI locales, plus the bare codes Chromium maps onto one
 * of them (`en` -> en-US, `pt` -> pt-BR, `zh` -> zh-CN) because callers send those most.
 */
export const BROWSER_LANGUAGES = [
  'af', 'am', 'ar', 'as', 'az', 'be', 'bg', 'bn', 'bs', 'ca', 'cs', 'cy', 'da', 'de', 'el',
  'en', 'en-GB', 'en-US', 'es', 'es-419', 'et', 'eu', 'fa', 'fi', 'fil', 'fr', 'fr-CA', 'gl',
  'gu', 'he', 'hi', 'hr', 'hu', 'hy', 'id', 'is', 'it', 'ja', 'ka', 'kk', 'km', 'kn', 'ko',
  'ky', 'lo', 'lt', 'lv', 'mk', 'ml', 'mn', 'mr', 'ms', 'my', 'nb', 'ne', 'nl', 'or', 'pa',
  'pl', 'pt', 'pt-BR', 'pt-PT', 'ro', 'ru', 'si', 'sk', 'sl', 'sq', 'sr', 'sr-Latn', 'sv',
  'sw', 'ta', 'te', 'th', 'tr', 'uk', 'ur', 'uz', 'vi', 'zh', 'zh-CN', 'zh-HK', 'zh-TW', 'zu',
] as const;
export type BrowserLanguage = (typeof BROWSER_LANGUAGES)[number];
export const DEFAULT_BROWSER_LANGUAGE: BrowserLanguage = 'en';

export function isBrowserLanguage(value: unknown): value is BrowserLanguage {
  return (BROWSER_LANGUAGES as readonly unknown[]).includes(value);
}

/**
 * A session's `language` as a create may ask for it: a browser interface language, or one of
 * their languages with a region (`de-AT`, `fr-BE`, `en-AU`: two letters or three digits, as BCP 47
 * writes regions). Pages are told it as asked; the interface shows the nearest of the same
 * language the browser has (decisions.md 42).
 */
export function isSessionLanguage(value: unknown): value is string {
  if (isBrowserLanguage(value)) return true;
  const match = typeof value === 'string' ? /^([a-z]{2,3})-([A-Z]{2}|\d{3})$/.exec(value) : null;
  return match !== null && isBrowserLanguage(match[1]);
}

/** X keyboard layouts: the layouts of xkeyboard-config's evdev rules, so `setxkbmap` knows each. */
export const KEYBOARD_LAYOUTS = [
  'af', 'al', 'am', 'ara', 'at', 'au', 'az', 'ba', 'bd', 'be', 'bg', 'br', 'brai', 'bt', 'bw',
  'by', 'ca', 'cd', 'ch', 'cm', 'cn', 'cz', 'de', 'dk', 'dz', 'ee', 'epo', 'es', 'et', 'fi',
  'fo', 'fr', 'gb', 'ge', 'gh', 'gn', 'gr', 'hr', 'hu', 'id', 'ie', 'il', 'in', 'iq', 'ir',
  'is', 'it', 'jp', 'jv', 'ke', 'kg', 'kh', 'kr', 'kz', 'la', 'latam', 'lk', 'lt', 'lv', 'ma',
  'mao', 'md', 'me', 'mk', 'ml', 'mm', 'mn', 'mt', 'mv', 'my', 'ng', 'nl', 'no', 'np', 'ph',
  'pk', 'pl', 'pt', 'ro', 'rs', 'ru', 'se', 'si', 'sk', 'sn', 'sy', 'tg', 'th', 'tj', 'tm',
  'tr', 'tw', 'tz', 'ua', 'us', 'uz', 'vn', 'za',
] as const;
export type KeyboardLayout = (typeof KEYBOARD_LAYOUTS)[number];
export const DEFAULT_KEYBOARD_LAYOUT: KeyboardLayout = 'us';

export function isKeyboardLayout(value: unknown): value is KeyboardLayout {
  return (KEYBOARD_LAYOUTS as readonly unknown[]).includes(value);
}
