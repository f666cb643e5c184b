// The image catalog: which browsers this host has, whether each can start right now, and the
// interface languages each can show.
import { execFile } from 'node:child_process';
import { access, constants, realpath } from 'node:fs/promises';
import { installedLocales, type BrowserFamily } from './locales.js';

export type { BrowserFamily };

/**
 * Whether the engine holds a DevTools connection to a browser of this family (the Chromium family
 * does; Firefox is reached over WebDriver BiDi, decisions.md 143): what the editing channel and
 * the automation protocol follow, said once. An unknown family (undefined: an image this node does
 * not know) is left to the node that runs the session, which knows it.
 */
export function speaksDevTools(family: BrowserFamily | string | undefined): boolean {
  return family === undefined || family === 'chromium';
}


export interface BrowserImage {
  /** The value callers send as `browser`. */
  id: string;
  /** Display name. */
  name: string;
  family: BrowserFamily;
  /** Name used by v6 callers (`/b?browser=`). */
  v6Name: string;
  /** The executable found on this host, or null. */
  executable: string | null;
  version: string | null;
  /** Present and answered a version probe. */
  enabled: boolean;
  /** Why it is not enabled, for `doctor` and operators. */
  reason: string | null;
  /** Interface locales it can show (e.g. `de`, `en-US`, `pt-BR`); empty when not installed. */
  locales: string[];
}

export interface ImageDefinition {
  id: string;
  name: string;
  family: BrowserFamily;
  v6Name: string;
  candidates: string[];
  /** Debian package that provides it, for the doctor's install hint. */
  packageHint: string;
}

// The real binary comes before Debian's /usr/bin wrapper script: it starts faster and prints no shell noise.
export const IMAGE_DEFINITIONS: readonly ImageDefinition[] = [
  { id: 'chromium', name: 'Chromium', family: 'chromium', v6Name: 'Chrome', candidates: ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser', '/snap/bin/chromium'], packageHint: 'chromium' },
  { id: 'chrome', name: 'Google Chrome', family: 'chromium', v6Name: 'Chrome', candidates: ['/opt/google/chrome/chrome', '/usr/bin/google-chrome-stable', '/usr/bin/google-chrome'], packageHint: 'google-chrome-stable (vendor repository)' },
  { id: 'firefox-esr', name: 'Firefox ESR', family: 'firefox', v6Name: 'Firefox', candidates: ['/usr/lib/firefox-esr/firefox-esr', '/usr/bin/firefox-esr'], packageHint: 'firefox-esr' },
  { id: 'firefox', name: 'Firefox', family: 'firefox', v6Name: 'Firefox', candidates: ['/usr/lib/firefox/firefox', '/usr/bin/firefox', '/opt/firefox/firefox'], packageHint: 'firefox (vendor repository)' },
  { id: 'brave', name: 'Brave', family: 'chromium', v6Name: 'Brave', candidates: ['/opt/brave.com/brave/brave', '/usr/bin/brave-browser'], packageHint: 'brave-browser (vendor repository)' },
  { id: 'edge', name: 'Microsoft Edge', family: 'chromium', v6Name: 'Edge', candidates: ['/opt/microsoft/msedge/msedge', '/usr/bin/microsoft-edge'], packageHint: 'microsoft-edge-stable (vendor repository)' },
  { id: 'opera', name: 'Opera', family: 'chromium', v6Name: 'Opera', candidates: ['/usr/lib/x86_64-linux-gnu/opera/opera', '/usr/bin/opera'], packageHint: 'opera-stable (vendor repository)' },
  { id: 'tor', name: 'Tor Browser', family: 'firefox', v6Name: 'Tor', candidates: ['/opt/tor-browser/Browser/firefox', '/usr/lib/torbrowser/Browser/firefox'], packageHint: 'torbrowser-launcher, then run it once' },
];

async function firstExecutable(candidates: string[]): Promise<string | null> {
  for (const path of candidates) {
    try {
      await access(path, constants.X_OK);
      return await realpath(path);
    } catch {
      /* try the next */
    }
  }
  return null;
}

function probeVersion(executable: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(executable, ['--version'], { timeout: 10_000, env: { ...process.env, MOZ_CRASHREPORTER_DISABLE: '1' } }, (error, stdout) => {
      if (error) reject(error);
      else resolve(stdout.trim().split('\n').pop() ?? '');
    });
  });
}

/** Finds the installed browsers and probes each once. */
export async function discoverImages(definitions: readonly ImageDefinition[] = IMAGE_DEFINITIONS): Promise<BrowserImage[]> {
  const images = await Promise.all(
    definitions.map(async (definition): Promise<BrowserImage> => {
      const { candidates, packageHint, ...rest } = definition;
      const executable = await firstExecutable(candidates);
      if (!executable) {
        return { ...rest, executable: null, version: null, enabled: false, reason: `not installed (${packageHint})`, locales: [] };
      }
      const locales = await installedLocales(definition.family, executable);
      try {
        const version = await probeVersion(executable);
        return { ...rest, executable, version, enabled: true, reason: null, locales };
      } catch (error) {
        return { ...rest, executable, version: null, enabled: false, reason: `cannot start: ${(error as Error).message.split('\n')[0]}`, locales };
      }
    }),
  );
  // Debian's /usr/bin/firefox only starts Firefox ESR: one browser (same binary or same version
  // banner) is one image, listed under its first name.
  const seen = new Set<string>();
  return images.map((image) => {
    if (!image.executable) return image;
    if (seen.has(image.executable) || (image.version && seen.has(image.version))) return { ...image, executable: null, version: null, enabled: false, reason: 'not installed (only another image\'s executable under its name)', locales: [] };
    seen.add(image.executable);
    if (image.version) seen.add(image.version);
    return image;
  });
}
