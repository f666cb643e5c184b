#!/usr/bin/env node
// One-time set-up that `npm start` and `npm test` run first: the Debian packages the session
// runtime needs (installed with apt-get when root, else the exact command is printed) and the
// npm dependencies. It uses only Node's own modules, so it runs before `npm install`.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

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
];

/** Debian packages only the benchmarks need: wrk is the load generator of `npm run bench -- api`. */
export const BENCH_PACKAGES = [['wrk', '/usr/bin/wrk']];

function missingPackages(packages) {
  return packages.filter(([, file]) => !existsSync(file)).map(([name]) => name);
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
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...missing]]) {
    const result = spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env });
    if (result.status !== 0) {
      console.error(`apt-get ${args[0]} failed (exit ${result.status}). Run as root:\n  ${command}`);
      process.exit(1);
    }
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
  installSystemPackages();
  installNpmDependencies();
}
