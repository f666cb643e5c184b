// A Firefox installation of the session's own, so that its refusals (decisions.md 25) hold.
// Firefox reads enterprise policies only from `distribution/policies.json` beside its executable
// (never from the profile), and a profile's preferences can be changed by whoever uses the browser.
// The session therefore runs Firefox from a directory in the session directory: a copy of the small
// launcher executable (Firefox finds its installation through the executable's real path, so a link
// would lead back to the system's), links to everything else in the installation, and a
// `distribution/policies.json` that refuses file:// pages and the about: pages that change the
// browser, and locks the egress proxy settings. The system's Firefox is not touched.
import { copyFile, mkdir, readdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** The session's policies: what Chromium's DevTools guard refuses, in Firefox's own terms. */
export function firefoxPolicies(proxyUrl: string): unknown {
  const proxy = new URL(proxyUrl);
  const locked = (value: string | number | boolean) => ({ Value: value, Status: 'locked' });
  return {
    policies: {
      // Local files of the engine's host are never shown (decisions.md 25).
      WebsiteFilter: { Block: ['file:///*'] },
      // The pages that change the browser itself (the proxy among them), as chrome:// in Chromium.
      BlockAboutConfig: true,
      BlockAboutProfiles: true,
      BlockAboutSupport: true,
      BlockAboutAddons: true,
      DisableDeveloperTools: true,
      DisableAppUpdate: true,
      DisableTelemetry: true,
      DisableFirefoxStudies: true,
      DontCheckDefaultBrowser: true,
      // Every request goes through the session's egress proxy; Settings shows these greyed out.
      Preferences: {
        'network.proxy.type': locked(1),
        'network.proxy.http': locked(proxy.hostname),
        'network.proxy.http_port': locked(Number(proxy.port)),
        'network.proxy.ssl': locked(proxy.hostname),
        'network.proxy.ssl_port': locked(Number(proxy.port)),
        'network.proxy.share_proxy_settings': locked(true),
        'network.proxy.no_proxies_on': locked(''),
        'network.proxy.allow_hijacking_localhost': locked(true),
      },
    },
  };
}

/**
 * Builds the session's Firefox in `dir` from the installation of `executable` and returns the
 * executable to start.
 */
export async function prepareFirefox(executable: string, dir: string, proxyUrl: string): Promise<string> {
  const real = await realpath(executable);
  const installation = dirname(real);
  await mkdir(dir, { recursive: true });
  for (const entry of await readdir(installation)) {
    const source = join(installation, entry);
    if (entry === basename(real)) await copyFile(source, join(dir, entry));
    else if (entry !== 'distribution') await symlink(source, join(dir, entry));
  }
  const distribution = join(dir, 'distribution');
  await mkdir(distribution);
  // Keep what the installation ships there (search engines), except its own policies.
  const shipped = await readdir(join(installation, 'distribution')).catch(() => [] as string[]);
  for (const entry of shipped) {
    if (entry !== 'policies.json') await symlink(join(installation, 'distribution', entry), join(distribution, entry));
  }
  await writeFile(join(distribution, 'policies.json'), JSON.stringify(firefoxPolicies(proxyUrl), null, 2));
  return join(dir, basename(real));
}
