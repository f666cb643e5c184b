// Where a session's traffic leaves (exit locations and the residential route) and the time zone
// its browser keeps there (decisions.md 43). Pure over the configuration and the exits' loads, so
// exit choice and zones are tested without a store or a browser.
import type { ExitCity, ExitLocation } from '../config.js';
import { cityTimeZone, countryTimeZone } from '../runtime/index.js';

/** What exits and zones read of the engine's configuration. */
export interface ExitSettings {
  locations: readonly ExitLocation[];
  residential: { upstream: string | null };
  /** The operator's default zone. */
  timeZone: string;
}

/** What exits and zones read of a session. */
export interface SessionExit {
  exit_city: string | null;
  egress: string | null;
  country: string | null;
}

/**
 * The exit city for a requested `country` (decisions.md 15): `auto` takes the first free city of
 * any location; a country code its default city when free, else another free city of it; a city
 * code that city. A city is free when it has an upstream and room under its capacity (`loads`:
 * sessions using each city now). `unsupported` names no configured location; `unavailable` has
 * no free exit right now.
 */
export function chooseExit(locations: readonly ExitLocation[], loads: ReadonlyMap<string, number>, code: string): ExitCity | 'unsupported' | 'unavailable' {
  const free = (city: ExitCity) => city.upstream !== null && (loads.get(city.code) ?? 0) < city.capacity;
  if (code === 'auto') {
    for (const location of locations) {
      const city = location.cities.find(free);
      if (city) return city;
    }
    return 'unavailable';
  }
  const country = locations.find((l) => l.code === code);
  if (country) {
    const preferred = country.cities.find((c) => c.code === country.default);
    const city = preferred && free(preferred) ? preferred : country.cities.find(free);
    return city ?? 'unavailable';
  }
  const city = locations.flatMap((l) => l.cities).find((c) => c.code === code);
  if (!city) return 'unsupported';
  return free(city) ? city : 'unavailable';
}

/** The upstream proxy a session's traffic leaves through: its residential route or exit city. */
export function upstreamFor(settings: ExitSettings, session: SessionExit): string | undefined {
  if (session.egress === 'residential') return settings.residential.upstream ?? undefined;
  if (!session.exit_city) return undefined;
  return settings.locations.flatMap((l) => l.cities).find((c) => c.code === session.exit_city)?.upstream ?? undefined;
}

/**
 * The time zone a session's browser keeps (decisions.md 43): its exit city's; for a residential
 * connection, its country's (the configured location's zone, else the zone that dominates the
 * country, else its configured default city's); else, and for a v7 session whose location was not
 * applied, the operator's default.
 */
export function timeZoneFor(settings: ExitSettings, session: SessionExit): string {
  const { locations, timeZone } = settings;
  if (session.exit_city) {
    for (const location of locations) {
      const city = location.cities.find((c) => c.code === session.exit_city);
      if (city) return cityTimeZone(location, city) ?? timeZone;
    }
  }
  if (session.egress === 'residential' && session.country && session.country !== 'auto') {
    const code = session.country.split('-')[0]!;
    const location = locations.find((l) => l.code === code);
    const city = location?.cities.find((c) => c.code === location.default) ?? location?.cities[0];
    return countryTimeZone(location, code) ?? (location && city ? cityTimeZone(location, city) : undefined) ?? timeZone;
  }
  return timeZone;
}
