// `remote-browser-kit doctor`: what this host has for running sessions (the interface languages of
// each browser among it), what is missing, and whether the data directory is the engine's alone.
import { existsSync } from 'node:fs';
import { totalmem } from 'node:os';
import { DEFAULT_WARM, type EngineConfig } from './config.js';
import { describeOpenModes, fixFor, openModes } from './data-directory-mode.js';
import { type BrowserImage, BUILT_IN_LOCALE, discoverImages, memfdProtection, probeConfinement, probeSound, WARM_ESTIMATE_MB } from './runtime/index.js';
import { canFreeze } from './runtime/index.js';

export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface DoctorReport {
  ok: boolean;
  checks: DoctorCheck[];
  images: BrowserImage[];
}

// The same list scripts/setup.mjs installs; kept here as data the doctor can explain.
const REQUIRED_TOOLS: Array<[string, string, string]> = [
  ['Xvnc (display and VNC server)', '/usr/bin/Xvnc', 'tigervnc-standalone-server'],
  ['matchbox-window-manager', '/usr/bin/matchbox-window-manager', 'matchbox-window-manager'],
  ['setxkbmap (keyboard layouts)', '/usr/bin/setxkbmap', 'x11-xkb-utils'],
  ['xdotool (Firefox readiness)', '/usr/bin/xdotool', 'xdotool'],
  ['Liberation fonts', '/usr/share/fonts/truetype/liberation', 'fonts-liberation'],
  ['Noto CJK fonts (Japanese pages)', '/usr/share/fonts/opentype/noto', 'fonts-noto-cjk'],
];


/** The warm pool the configuration asks for, and whether it leaves this host's sessions at least half its memory. */
export function warmPoolCheck(warm: EngineConfig['warm'] = DEFAULT_WARM, totalMb = Math.round(totalmem() / 1024 / 1024)): DoctorCheck {
  const name = 'warm pool (sessions start in a ready browser)';
  if (warm.memoryMb === 0 || warm.browsers === 0) {
    return { name, ok: true, detail: `warm browsers off (warm.memoryMb 0 or warm.browsers 0): every session starts cold${warm.displays > 0 ? `, on one of ${warm.displays} ready displays` : ''}` };
  }
  const fits = Math.floor(Math.max(0, warm.memoryMb - warm.displays * WARM_ESTIMATE_MB.display) / WARM_ESTIMATE_MB.chromium);
  const most = warm.browsers === null ? fits : Math.min(fits, warm.browsers);
  // Sessions need the rest: a pool that may hold more than half the host's memory is too big.
  const ok = warm.memoryMb <= totalMb / 2;
  return {
    name,
    ok,
    detail:
      `on: up to ${warm.memoryMb} MB, about ${most} Chromium browser${most === 1 ? '' : 's'} at ~${WARM_ESTIMATE_MB.chromium} MB each idle (Firefox ESR ~${WARM_ESTIMATE_MB.firefox} MB), and ${warm.displays} ready display${warm.displays === 1 ? '' : 's'}; ` +
      `kept warm: ${warm.languages.join(', ') || 'none'}; more for languages created lately, fewer after ${warm.quietMinutes} quiet minutes` +
      (ok ? '' : ` — more than half of this host's ${totalMb} MB, which sessions need: lower warm.memoryMb`),
  };
}

/** Whether others on this host may read the data directory's secrets (the engine closes it at its next start, decisions.md 130). */
export function dataDirectoryCheck(dataDir: string): DoctorCheck {
  const name = 'data directory readable by the engine alone (0700, its database 0600)';
  if (!existsSync(dataDir)) return { name, ok: true, detail: `${dataDir}: not made yet; the engine makes it 0700` };
  const found = openModes(dataDir);
  if (found.length === 0) return { name, ok: true, detail: dataDir };
  return { name, ok: false, detail: `${describeOpenModes(found)}: others on this host can read the share-link, replay and automation secrets; the engine closes it at its next start, or run: ${fixFor(found)}` };
}

export async function runDoctor(config?: Pick<EngineConfig, 'warm'>, dataDir?: string): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [];
  if (dataDir !== undefined) checks.push(dataDirectoryCheck(dataDir));
  const [major] = process.versions.node.split('.').map(Number);
  checks.push({ name: 'Node.js', ok: (major ?? 0) >= 20, detail: `v${process.versions.node}${(major ?? 0) >= 20 ? '' : ' (needs 20 or later)'}` });
  checks.push({ name: 'Linux', ok: process.platform === 'linux', detail: process.platform });
  for (const [name, file, pkg] of REQUIRED_TOOLS) {
    const present = existsSync(file);
    checks.push({ name, ok: present, detail: present ? file : `missing: apt-get install -y ${pkg}` });
  }
  // Sessions are confined by default; without these the engine refuses to start them
  // (or runs them unconfined only when the operator set insecure.unconfined).
  const confinement = probeConfinement();
  checks.push({
    name: 'session confinement (own uid, namespaces, memory and process caps)',
    ok: confinement.available,
    detail: confinement.available ? 'available' : `missing: ${confinement.missing.join('; ')}`,
  });
  // Which protection keeps a session from running a program copied into memory (a memfd): the
  // exec guard's Landlock rules see only files, so the kernel setting or the guard's seccomp
  // filter does it; without either the guard refuses to start programs (exec-guard.ts).
  const memfd = memfdProtection();
  checks.push({ name: 'exec guard: programs copied into memory (memfd) cannot run', ok: memfd.kind !== 'none', detail: memfd.detail });
  checks.push(warmPoolCheck(config?.warm));
  // Standby freezes an idle session's processes (decisions.md 141); without a freezer they stay awake (never refused).
  const freezer = canFreeze();
  checks.push({ name: 'standby (the cgroup freezer)', ok: freezer.available, detail: freezer.available ? 'available (turned off by `"standby": { "afterSeconds": false }`)' : `missing, idle sessions stay awake: ${freezer.reason}` });
  // Sessions run without sound when these are missing (never refused): the check says so.
  const sound = probeSound();
  checks.push({
    name: 'session sound (PulseAudio, Opus encoder)',
    ok: sound.available,
    detail: sound.available ? 'available (turned off by `"sound": false`)' : `missing, sessions run without sound: ${sound.missing.join('; ')}`,
  });
  const images = await discoverImages();
  const anyBrowser = images.some((image) => image.enabled);
  checks.push({
    name: 'a startable browser',
    ok: anyBrowser,
    detail: anyBrowser ? images.filter((i) => i.enabled).map((i) => i.name).join(', ') : 'none: apt-get install -y chromium firefox-esr',
  });
  // A browser with only its built-in English shows English menus, dialogs and error pages to
  // sessions in every other language, and the engine refuses those languages (decisions.md 42).
  for (const image of images.filter((i) => i.enabled && i.id in TRANSLATIONS)) {
    const translated = image.locales.some((locale) => locale !== BUILT_IN_LOCALE);
    checks.push({
      name: `${image.name} interface languages`,
      ok: translated,
      detail: translated ? `${image.locales.length} (doctor lists them under Browsers)` : `English only: apt-get install -y ${TRANSLATIONS[image.id]}`,
    });
  }
  return { ok: checks.every((c) => c.ok), checks, images };
}

/** Debian packages with the translations of the Debian browsers (scripts/setup.mjs installs them). */
const TRANSLATIONS: Record<string, string> = {
  chromium: 'chromium-l10n',
  'firefox-esr': 'firefox-esr-l10n-de firefox-esr-l10n-fr … (npm run setup installs every one the engine offers)',
};

export function formatDoctor(report: DoctorReport): string {
  const lines = report.checks.map((c) => `${c.ok ? 'ok     ' : 'MISSING'}  ${c.name}: ${c.detail}`);
  lines.push('', 'Browsers:');
  for (const image of report.images) {
    lines.push(`${image.enabled ? 'enabled ' : 'disabled'}  ${image.id.padEnd(12)} ${image.name}: ${image.enabled ? `${image.version} (${image.executable})` : image.reason}`);
    if (image.enabled) lines.push(`          ${''.padEnd(12)} interface languages: ${image.locales.join(' ')}`);
  }
  lines.push('', report.ok ? 'Everything a session needs is present.' : 'Some parts are missing: run `npm run setup` as root, or the commands above.');
  return lines.join('\n');
}
