// Exit choice and time zones (sessions/exits.ts, decisions.md 15 and 43): which city a requested
// country takes given the exits' loads, the upstream a session leaves through, and the zone its
// browser keeps. Configuration objects only; no store, no browser.
import { describe, expect, it } from 'vitest';
import type { ExitLocation } from '../../src/engine/config.js';
import { chooseExit, timeZoneFor, upstreamFor, type ExitSettings } from '../../src/engine/sessions/exits.js';

const city = (code: string, extra: Partial<ExitLocation['cities'][number]> = {}) => ({ code, location: code, upstream: `http://${code}.proxy:8080`, capacity: 2, ...extra });

const LOCATIONS: ExitLocation[] = [
  { code: 'de', name: 'Germany', default: 'de-fra', cities: [city('de-fra'), city('de-ber')] },
  { code: 'us', name: 'United States', default: 'us-nyc', cities: [city('us-nyc'), city('us-lax', { timeZone: 'America/Los_Angeles' })] },
  { code: 'xx', name: 'Nowhere', default: 'xx-one', timeZone: 'Asia/Tokyo', cities: [city('xx-one', { upstream: null })] },
];

const SETTINGS: ExitSettings = { locations: LOCATIONS, residential: { upstream: 'http://residential:9000' }, timeZone: 'America/Sao_Paulo' };
const none = new Map<string, number>();

describe('exit choice', () => {
  it('takes a country\'s default city while it has room, then another free city of it', () => {
    expect(chooseExit(LOCATIONS, none, 'de')).toMatchObject({ code: 'de-fra' });
    expect(chooseExit(LOCATIONS, new Map([['de-fra', 2]]), 'de')).toMatchObject({ code: 'de-ber' });
    expect(chooseExit(LOCATIONS, new Map([['de-fra', 2], ['de-ber', 2]]), 'de')).toBe('unavailable');
  });

  it('takes a city code as that city, when it has room', () => {
    expect(chooseExit(LOCATIONS, none, 'us-lax')).toMatchObject({ code: 'us-lax' });
    expect(chooseExit(LOCATIONS, new Map([['us-lax', 2]]), 'us-lax')).toBe('unavailable');
  });

  it('takes auto as the first free city of any location', () => {
    expect(chooseExit(LOCATIONS, none, 'auto')).toMatchObject({ code: 'de-fra' });
    expect(chooseExit(LOCATIONS, new Map([['de-fra', 2], ['de-ber', 5]]), 'auto')).toMatchObject({ code: 'us-nyc' });
    expect(chooseExit(LOCATIONS, new Map([['de-fra', 2], ['de-ber', 2], ['us-nyc', 2], ['us-lax', 2]]), 'auto')).toBe('unavailable');
  });

  it('never takes a city without an upstream, and names what is not configured unsupported', () => {
    expect(chooseExit(LOCATIONS, none, 'xx')).toBe('unavailable');
    expect(chooseExit(LOCATIONS, none, 'xx-one')).toBe('unavailable');
    expect(chooseExit(LOCATIONS, none, 'fr')).toBe('unsupported');
    expect(chooseExit(LOCATIONS, none, 'fr-par')).toBe('unsupported');
  });
});

describe('a session\'s upstream', () => {
  it('is its exit city\'s, the residential route, or none', () => {
    expect(upstreamFor(SETTINGS, { exit_city: 'us-lax', egress: null, country: 'us-lax' })).toBe('http://us-lax.proxy:8080');
    expect(upstreamFor(SETTINGS, { exit_city: null, egress: 'residential', country: 'de' })).toBe('http://residential:9000');
    expect(upstreamFor(SETTINGS, { exit_city: null, egress: null, country: null })).toBeUndefined();
  });
});

describe('a session\'s time zone', () => {
  it('is its exit city\'s own zone, else its country\'s', () => {
    expect(timeZoneFor(SETTINGS, { exit_city: 'us-lax', egress: null, country: 'us' })).toBe('America/Los_Angeles');
    expect(timeZoneFor(SETTINGS, { exit_city: 'de-ber', egress: null, country: 'de' })).toBe('Europe/Berlin');
    expect(timeZoneFor(SETTINGS, { exit_city: 'xx-one', egress: null, country: 'xx' })).toBe('Asia/Tokyo');
  });

  it('is, for a residential connection, its country\'s: the configured zone, the dominant one, else the default city\'s', () => {
    expect(timeZoneFor(SETTINGS, { exit_city: null, egress: 'residential', country: 'xx' })).toBe('Asia/Tokyo');
    expect(timeZoneFor(SETTINGS, { exit_city: null, egress: 'residential', country: 'de-ber' })).toBe('Europe/Berlin');
    expect(timeZoneFor(SETTINGS, { exit_city: null, egress: 'residential', country: 'fr' })).toBe('Europe/Paris');
  });

  it('is the operator\'s default without an exit: no location, auto residential, or a v7 location not applied', () => {
    expect(timeZoneFor(SETTINGS, { exit_city: null, egress: null, country: null })).toBe('America/Sao_Paulo');
    expect(timeZoneFor(SETTINGS, { exit_city: null, egress: 'residential', country: 'auto' })).toBe('America/Sao_Paulo');
    expect(timeZoneFor(SETTINGS, { exit_city: null, egress: null, country: 'de' })).toBe('America/Sao_Paulo');
  });
});
