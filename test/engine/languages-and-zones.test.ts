// What an operator and a caller see of the interface languages and time zones without starting a
// browser: doctor's list of each image's languages, which interface a session's `language` gets on
// the installed images (the nearest rule, decisions.md 42), and the time zone settings a
// configuration must give (decisions.md 43).
import { describe, expect, it } from 'vitest';
import { parseEngineConfig } from '../../src/engine/config.js';
import { formatDoctor, runDoctor } from '../../src/engine/doctor.js';
import { discoverImages } from '../../src/engine/runtime/browser/catalog.js';
import { interfaceLocale } from '../../src/engine/runtime/browser/locales.js';

describe('interface languages of the installed images', () => {
  it('doctor lists the languages each image can show, German among them', async () => {
    const report = await runDoctor();
    const text = formatDoctor(report);
    for (const name of ['Chromium', 'Firefox ESR']) {
      expect(report.checks.find((c) => c.name === `${name} interface languages`)?.ok, name).toBe(true);
    }
    const languages = text.split('\n').filter((line) => line.trimStart().startsWith('interface languages: '));
    expect(languages).toHaveLength(2);
    for (const line of languages) expect(line.split(': ')[1]!.split(' ')).toEqual(expect.arrayContaining(['de', 'en-US', 'ja', 'fr', 'it', 'pt-BR']));
  });

  it('a session gets its exact language, else the nearest of the same language, never another one', async () => {
    const images = await discoverImages();
    const chromium = images.find((i) => i.id === 'chromium')!.locales;
    const firefox = images.find((i) => i.id === 'firefox-esr')!.locales;
    const shown = (language: string, locales: string[]) => interfaceLocale(language, locales);
    // Exact, and the variety most speakers use for a bare code.
    expect(['de', 'pt', 'en', 'es', 'zh'].map((l) => shown(l, chromium))).toEqual(['de', 'pt-BR', 'en-US', 'es', 'zh-CN']);
    expect(['de', 'pt', 'en', 'es', 'sv'].map((l) => shown(l, firefox))).toEqual(['de', 'pt-BR', 'en-US', 'es-ES', 'sv-SE']);
    // A region or script the image lacks: the same language.
    expect(['fr-CA', 'zh-HK', 'sr-Latn'].map((l) => shown(l, chromium))).toEqual(['fr', 'zh-TW', 'sr']);
    expect(['es-419', 'fr-CA', 'pt-PT'].map((l) => shown(l, firefox))).toEqual(['es-MX', 'fr', 'pt-PT']);
    // A language with a region neither has (what a create may ask for: de-AT): the language.
    expect(['de-AT', 'fr-BE', 'en-AU'].map((l) => shown(l, chromium))).toEqual(['de', 'fr', 'en-US']);
    expect(['de-AT', 'fr-BE'].map((l) => shown(l, firefox))).toEqual(['de', 'fr']);
    // No variety of the language at all: refused (the API says so naming `language`).
    expect(shown('zu', chromium)).toBeNull();
    expect(shown('sw', firefox)).toBeNull();
  });
});

describe('time zones in the configuration', () => {
  const city = (extra: Record<string, unknown> = {}) => ({ code: 'us-dal', location: 'Dallas', ...extra });

  it('a city in a country of several zones must name its zone; one that dominates its country needs none', () => {
    expect(() => parseEngineConfig({ locations: [{ code: 'us', name: 'United States', default: 'us-dal', cities: [city()] }] }))
      .toThrow(/locations\.0\.cities\.0\.timeZone: required: "us" has no single time zone/);
    const config = parseEngineConfig({
      locations: [
        { code: 'us', name: 'United States', default: 'us-dal', cities: [city({ timeZone: 'America/Chicago' })] },
        { code: 'de', name: 'Germany', default: 'de-fra', cities: [{ code: 'de-fra', location: 'Frankfurt' }] },
      ],
    });
    expect(config.timeZone).toBe('UTC');
  });

  it('refuses a name that is no IANA time zone, naming the setting', () => {
    expect(() => parseEngineConfig({ timeZone: 'Mars/Olympus' })).toThrow(/timeZone: must be an IANA time zone name/);
    expect(() => parseEngineConfig({ locations: [{ code: 'de', name: 'Germany', default: 'de-fra', timeZone: 'CEST+2', cities: [{ code: 'de-fra', location: 'Frankfurt' }] }] }))
      .toThrow(/locations\.0\.timeZone: must be an IANA time zone name/);
  });
});
