#!/usr/bin/env node
// One-time set-up that `npm start` and `npm test` run first: the Debian packages the session
// runtime needs (installed with apt-get when root, else the exact command is printed; with
// `--test`, also the ones only the tests need) and the npm dependencies. It uses only Node's own
// modules, so it runs before `npm install`.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Debian's Firefox ESR language packs (`firefox-esr-l10n-<name>`) for the browser interface
 * languages the engine offers; Debian has none for am, as, fil, fr-CA, ky, lo, ml, mn, or, sw, zu.
 */
export const FIREFOX_LANGUAGE_PACKS = [
  'af', 'ar', 'az', 'be', 'bg', 'bn', 'bs', 'ca', 'cs', 'cy', 'da', 'de', 'el', 'en-gb', 'es-es',
  'es-mx', 'et', 'eu', 'fa', 'fi', 'fr', 'gl', 'gu-in', 'he', 'hi-in', 'hr', 'hu', 'hy-am', 'id',
  'is', 'it', 'ja', 'ka', 'kk', 'km', 'kn', 'ko', 'lt', 'lv', 'mk', 'mr', 'ms', 'my', 'nb-no',
  'ne-np', 'nl', 'pa-in', 'pl', 'pt-br', 'pt-pt', 'ro', 'ru', 'si', 'sk', 'sl', 'sq', 'sr',
  'sv-se', 'ta', 'te', 'th', 'tr', 'uk', 'ur', 'uz', 'vi', 'zh-cn', 'zh-tw',
];

/** Debian's package name part to Mozilla's locale: `pt-br` -> `pt-BR`. */
function mozillaLocale(pack) {
  const [language, region] = pack.split('-');
  return region ? `${language}-${region.toUpperCase()}` : language;
}

/** Debian packages and a file each one provides, to tell whether it is installed. */
export const SYSTEM_PACKAGES = [
  ['chromium', '/usr/lib/chromium/chromium'],
  ['firefox-esr', '/usr/lib/firefox-esr/firefox-esr'],
  ['tigervnc-standalone-server', '/usr/bin/Xvnc'],
  ['matchbox-window-manager', '/usr/bin/matchbox-window-manager'],
  ['x11-xkb-utils', '/usr/bin/setxkbmap'],
  ['xdotool', '/usr/bin/xdotool'],
  ['fonts-liberation', '/usr/share/fonts/truetype/liberation'],
  ['fonts-noto-cjk', '/usr/share/fonts/opentype/noto'],
  ['procps', '/usr/bin/ps'],
  // Session confinement (docs/security.md): namespaces, and the in-sandbox relay to the egress route.
  ['bubblewrap', '/usr/bin/bwrap'],
  ['socat', '/usr/bin/socat'],
  // Session sound (docs/architecture.md): a PulseAudio per session, and ffmpeg's Opus encoder
  // that runs while someone listens.
  ['pulseaudio', '/usr/bin/pulseaudio'],
  ['ffmpeg', '/usr/bin/ffmpeg'],
  // pactl: the sound rests while only a recording listens and nothing plays (decisions.md 119).
  ['pulseaudio-utils', '/usr/bin/pactl'],
  // The browsers' own interface in the session's language (decisions.md 42): Chromium's locale
  // packs, and a Firefox ESR language pack for each language Debian translates it into that the
  // engine offers (src/protocol/languages.ts), marked by the pack itself.
  ['chromium-l10n', '/usr/lib/chromium/locales/de.pak'],
  ...FIREFOX_LANGUAGE_PACKS.map((pack) => [`firefox-esr-l10n-${pack}`, `/usr/lib/firefox-esr/browser/extensions/langpack-${mozillaLocale(pack)}@firefox-esr.mozilla.org.xpi`]),
];

/** Debian packages only the benchmarks need: wrk is the load generator of `npm run bench -- api`. */
export const BENCH_PACKAGES = [['wrk', '/usr/bin/wrk']];

/**
 * Debian packages only the tests need (`setup.mjs --test`, run by `npm test`): a throwaway Postgres
 * and an nginx load balancer in front of several engine nodes (test/helpers). The tests run their
 * binaries themselves; the system services stay stopped.
 */
export const TEST_PACKAGES = [
  ['postgresql', '/usr/lib/postgresql/15/bin/initdb'],
  ['nginx', '/usr/sbin/nginx'],
];

// Debian's policy-rc.d hook: exit 101 forbids maintainer scripts to start services.
const POLICY_RC_D = '/usr/sbin/policy-rc.d';

function missingPackages(packages) {
  return packages.filter(([, file]) => !existsSync(file)).map(([name]) => name);
}

/**
 * Runs `work` (apt-get) with a policy-rc.d that forbids starting services: packages with one
 * (postgresql, nginx) would start it on install, and nothing here uses the system services. A
 * host's own policy-rc.d is left as it is; ours (marked, also one an interrupted run left) goes.
 */
function withoutServiceStarts(work) {
  const marker = '# remote-browser-kit setup: no service starts during its apt-get install.';
  const ours = !existsSync(POLICY_RC_D) || readFileSync(POLICY_RC_D, 'utf8').includes(marker);
  if (ours) writeFileSync(POLICY_RC_D, `#!/bin/sh\n${marker}\nexit 101\n`, { mode: 0o755 });
  try {
    return work();
  } finally {
    if (ours) rmSync(POLICY_RC_D, { force: true });
  }
}

/** Installs the missing ones of `packages` ([name, file it provides] pairs) with apt-get as root. */
export function installSystemPackages(packages = SYSTEM_PACKAGES) {
  const missing = missingPackages(packages);
  if (missing.length === 0) return;
  const command = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (process.platform !== 'linux' || typeof process.getuid !== 'function' || process.getuid() !== 0) {
    console.error(`remote-browser-kit needs these Debian packages: ${missing.join(', ')}\nInstall them as root with:\n  ${command}`);
    process.exit(1);
  }
  console.log(`Installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const failure = withoutServiceStarts(() => {
    for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...missing]]) {
      const { status } = spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env });
      if (status !== 0) return `apt-get ${args[0]} failed (exit ${status})`;
    }
    return undefined;
  });
  if (failure) {
    console.error(`${failure}. Run as root:\n  ${command}`);
    process.exit(1);
  }
  const still = missingPackages(packages);
  if (still.length > 0) {
    console.error(`Still missing after apt-get: ${still.join(', ')}`);
    process.exit(1);
  }
}

/** npm install when node_modules is missing or older than the lock file. */
function installNpmDependencies() {
  const lock = join(root, 'package-lock.json');
  const marker = join(root, 'node_modules', '.package-lock.json');
  if (existsSync(marker) && (!existsSync(lock) || statSync(marker).mtimeMs >= statSync(lock).mtimeMs)) return;
  console.log('Installing npm dependencies (npm ci)');
  execFileSync('npm', [existsSync(lock) ? 'ci' : 'install', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
}

const isEntryPoint = process.argv[1] !== undefined && join(process.argv[1]) === fileURLToPath(import.meta.url);
if (isEntryPoint && process.env.RBK_SKIP_SETUP !== '1') {
  installSystemPackages(process.argv.includes('--test') ? [...SYSTEM_PACKAGES, ...TEST_PACKAGES] : SYSTEM_PACKAGES);
  installNpmDependencies();
}
