// A Firefox installation with the session's policies, so that its refusals (decisions.md 25) hold.
// Firefox reads enterprise policies only from `distribution/policies.json` beside its executable
// (never from the profile), and a profile's preferences can be changed by whoever uses the browser.
// The session therefore runs Firefox from a directory in the session directory: a copy of the small
// launcher executable (Firefox finds its installation through the executable's real path, so a link
// would lead back to the system's), links to everything else in the installation, and a
// `distribution/policies.json` that refuses local files and the about: pages that change the
// browser, and locks the egress proxy settings. The system's Firefox is not touched. Confined
// sessions all reach their egress route at the same address, so they share one such directory per
// interface locale, read-only; an unconfined session has its own in its session directory. Each
// directory holds only its locale's language pack (none for the built-in en-US): a fresh profile
// registers every pack it finds, which costs about half a second per start with all of Debian's.
import { copyFile, mkdir, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { BrowserImage } from './catalog.js';
import { addAgentConfig, AGENT_CONFIG_FILE } from './firefox-agent.js';
import type { SessionSandbox } from '../sandbox/confinement.js';

/** The session's policies: what Chromium's DevTools guard and policies refuse, in Firefox's own terms. */
export function firefoxPolicies(proxyUrl: string, downloadDir: string, languagePacks: readonly string[] = []): unknown {
  const proxy = new URL(proxyUrl);
  const locked = (value: string | number | boolean) => ({ Value: value, Status: 'locked' });
  return {
    policies: {
      // Local files are never shown (decisions.md 25). jar: and resource: addresses are beyond
      // this policy's patterns; confined, they reach only the session's own file system view.
      WebsiteFilter: { Block: ['file:///*'] },
      // The pages that change the browser itself (the proxy among them), as chrome:// in Chromium.
      BlockAboutConfig: true,
      BlockAboutProfiles: true,
      BlockAboutSupport: true,
      BlockAboutAddons: true,
      // The developer tools, about:debugging, about:devtools-toolbox and about:profiling are off,
      // in every session. The policy also stops the remote agent; an agent build lets it start
      // again with an AutoConfig file (firefox-agent.ts; decisions.md 103, 143, 155).
      DisableDeveloperTools: true,
      DisableAppUpdate: true,
      DisableTelemetry: true,
      DisableFirefoxStudies: true,
      DontCheckDefaultBrowser: true,
      DisableProfileImport: true,
      DisablePrivateBrowsing: false,
      // No add-ons, except the installation's own language packs: the session's interface
      // language comes from one (blocked, Firefox would disable them and show English).
      ExtensionSettings: {
        '*': { installation_mode: 'blocked' },
        ...Object.fromEntries(languagePacks.map((id) => [id, { installation_mode: 'allowed' }])),
      },
      // Downloads land in the session's own folder.
      DownloadDirectory: downloadDir,
      DefaultDownloadDirectory: downloadDir,
      PromptForDownloadLocation: false,
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
        // WebRTC through the proxy only: no UDP that the egress route does not see.
        'media.peerconnection.ice.proxy_only': locked(true),
        'media.peerconnection.ice.default_address_only': locked(true),
        'network.jar.block-remote-files': locked(true),
        // Downloads are never opened with another program of the session ("Open with", "Use
        // other..."), nor links handed to one: the person has the browser, nothing more.
        'browser.download.forbid_open_with': locked(true),
        'network.protocol-handler.external-default': locked(false),
        // Firefox's own defaults hand mailto: to another program without asking; the exec guard
        // would stop the program, and this stops Firefox from offering one ("Choose other
        // Application", whose file chooser could name any program on the system).
        'network.protocol-handler.external.mailto': locked(false),
        'network.protocol-handler.warn-external-default': locked(true),
        'devtools.policy.disabled': locked(true),
        'devtools.chrome.enabled': locked(false),
        'devtools.debugger.remote-enabled': locked(false),
      },
    },
  };
}

const built = new Map<string, Promise<void>>();

/**
 * The executable to start for the session's Firefox, as the session sees it: the launcher copy in
 * the sandbox's shared directory for the interface `locale` (built once per directory) with its
 * policies and that locale's language pack. `agent`: a directory of its own (`-agent`) with the
 * same policies and an AutoConfig file that lets the remote agent start (decisions.md 143, 155).
 */
export async function prepareFirefox(image: BrowserImage, sandbox: SessionSandbox, locale: string, agent = false): Promise<string> {
  const real = await realpath(image.executable!);
  const name = `firefox-${image.id}-${locale.replace(/[^A-Za-z0-9-]/g, '')}${agent ? '-agent' : ''}`;
  const hostDir = join(sandbox.sharedHostDir, name);
  let building = built.get(hostDir);
  if (!building) {
    building = buildFirefox(real, hostDir, sandbox.proxyUrl, join(sandbox.dir, 'downloads'), locale, agent);
    built.set(hostDir, building);
    // A failed build is made again next time; an unconfined session's build is its own.
    const confined = sandbox.confined;
    building.then(() => confined || built.delete(hostDir), () => built.delete(hostDir));
  }
  await building;
  return join(sandbox.sharedDir, name, basename(real));
}

/** Forgets the Firefox builds under `dir` (the runtime removed it). */
export function forgetFirefoxBuilds(dir: string): void {
  for (const key of built.keys()) if (key.startsWith(`${dir}/`)) built.delete(key);
}

/** A language pack's file name: `langpack-<locale>@<application id>.xpi`. */
const LANGUAGE_PACK = /^langpack-([A-Za-z0-9-]+)@[A-Za-z0-9.-]+\.xpi$/;

/**
 * `browser/` of the launcher directory: links to the installation's, except that `extensions/`
 * holds only the language pack of `locale` (and whatever is there that is no language pack).
 * Returns the ids of the language packs it holds.
 */
async function buildBrowserDir(installation: string, dir: string, locale: string): Promise<string[]> {
  const source = join(installation, 'browser');
  await mkdir(join(dir, 'browser'), { mode: 0o755 });
  for (const entry of await readdir(source).catch(() => [] as string[])) {
    if (entry !== 'extensions') await symlink(join(source, entry), join(dir, 'browser', entry));
  }
  await mkdir(join(dir, 'browser', 'extensions'), { mode: 0o755 });
  const packs: string[] = [];
  for (const file of await readdir(join(source, 'extensions')).catch(() => [] as string[])) {
    const pack = LANGUAGE_PACK.exec(file);
    if (pack && pack[1] !== locale) continue;
    await symlink(join(source, 'extensions', file), join(dir, 'browser', 'extensions', file));
    if (pack) packs.push(file.slice(0, -'.xpi'.length));
  }
  return packs;
}

async function buildFirefox(real: string, dir: string, proxyUrl: string, downloadDir: string, locale: string, agent: boolean): Promise<void> {
  const installation = dirname(real);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o755 });
  let languagePacks: string[] = [];
  for (const entry of await readdir(installation)) {
    const source = join(installation, entry);
    if (entry === basename(real)) await copyFile(source, join(dir, entry));
    else if (entry === 'browser') languagePacks = await buildBrowserDir(installation, dir, locale);
    else if (agent && (entry === 'defaults' || entry === AGENT_CONFIG_FILE)) continue;
    else if (entry !== 'distribution') await symlink(source, join(dir, entry));
  }
  if (agent) await addAgentConfig(installation, dir);
  const distribution = join(dir, 'distribution');
  await mkdir(distribution, { mode: 0o755 });
  // Keep what the installation ships there (search engines), except its own policies.
  const shipped = await readdir(join(installation, 'distribution')).catch(() => [] as string[]);
  for (const entry of shipped) {
    if (entry !== 'policies.json') await symlink(join(installation, 'distribution', entry), join(distribution, entry));
  }
  const policies = firefoxPolicies(proxyUrl, downloadDir, languagePacks);
  await writeFile(join(distribution, 'policies.json'), JSON.stringify(policies, null, 2), { mode: 0o644 });
}
