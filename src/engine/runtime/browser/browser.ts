// Starting a real browser on a session's display: a fresh profile inside the session directory,
// its interface language and time zone, its egress route, and every file it writes (crash handler
// included) kept inside.
import { lstat, readFile, realpath, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { BiDiHub } from './bidi-hub.js';
import { BrowserReader } from './browser-reader.js';
import type { BrowserImage } from './catalog.js';
import type { SessionSandbox } from '../sandbox/confinement.js';
import type { Display } from '../display/display.js';
import { AGENT_PATH, agentPort } from './firefox-agent.js';
import { prepareFirefox } from './firefox-launcher.js';
import { gettextLanguage } from './locales.js';
import { signalProcess, withTimeout, type SupervisedProcess } from '../sandbox/processes.js';
import { readWithinBudget } from '../sandbox/read-budget.js';
import type { SessionSound } from '../capture/sound.js';

export interface BrowserLaunch {
  image: BrowserImage;
  sandbox: SessionSandbox;
  display: Display;
  /** The session's sound server (PULSE_SERVER); null or absent: the browser plays into nothing. */
  sound?: SessionSound | null;
  width: number;
  height: number;
  /** The session's `language`: what pages are told (Accept-Language, navigator.language). */
  language: string;
  /** The interface locale that shows it, one the image has (locales.ts): menus, dialogs, error pages. */
  locale: string;
  /** IANA time zone the browser keeps (TZ): the exit's, or the operator's default. */
  timeZone: string;
  timeoutMs: number;
  /** A saved profile's open tabs come back (decisions.md 89): the browser restores its last session, and a blank first page adds no tab. */
  restoreTabs?: boolean;
  /** `app`: kiosk mode, no tab strip or address bar of its own (decisions.md 103, 104). */
  window?: 'browser' | 'app';
  /** Programs may drive it (`automation: true`, decisions.md 143): a Firefox starts its remote agent. Chromium ignores it (DevTools runs either way). */
  automation?: boolean;
}

/**
 * The browser's environment: the display, gettext's LANGUAGE for the toolkit's own dialogs (the
 * file chooser), which gettext honours only outside the plain C locale, and the time zone.
 */
function browserEnvironment(launch: BrowserLaunch): NodeJS.ProcessEnv {
  const env = launch.display.env;
  const plainC = !env.LANG || env.LANG === 'C' || env.LANG === 'POSIX';
  return { ...env, ...(plainC ? { LANG: 'C.UTF-8' } : {}), LANGUAGE: gettextLanguage(launch.locale), TZ: launch.timeZone, ...launch.sound?.clientEnv };
}

export interface BrowserProcess {
  readonly image: BrowserImage;
  readonly process: SupervisedProcess;
  /** Chromium family: the browser-level DevTools WebSocket address. */
  readonly devtoolsUrl: string | null;
  /** The session's reader worker, where the engine's own connections to this browser are read (browser-reader.ts); null for a browser the engine holds no connection to. */
  readonly reader: BrowserReader | null;
  /**
   * Firefox: its remote agent's WebDriver BiDi WebSocket address (`ws+unix:` through a relay when
   * confined; decisions.md 143), the Host header it takes, and the hub that shares the agent's one
   * BiDi session among programs and the engine's tab watcher (bidi-hub.ts, decisions.md 169).
   */
  readonly bidi: { url: string; host: string; hub: BiDiHub } | null;
  /**
   * Resolves once the browser's window is on the display (rejects, saying so, if it is not within
   * the start time). Chromium answers on DevTools before it maps its window: the runtime connects
   * meanwhile and waits for both.
   */
  readonly windowShown: Promise<void>;
  stop(): Promise<void>;
}

function stopper(process: SupervisedProcess, reader: BrowserReader | null): () => Promise<void> {
  return async () => {
    signalProcess(process, 'SIGKILL');
    await Promise.all([process.exited, reader?.stop()]);
  };
}

// Flags measured to work on Debian Chromium as root; without the background-networking flags
// Chromium floods a closed network with connections.
const CHROMIUM_FLAGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-breakpad',
  '--disable-default-apps',
  '--disable-client-side-phishing-detection',
  // The last three keep the address bar's suggestions in native views instead of a WebUI
  // renderer of their own (about 80 MB for a lone session; docs/benchmarks.md).
  '--disable-features=Translate,MediaRouter,DialMediaRouteProvider,OptimizationHints,AutofillServerCommunication,PreloadTopChromeWebUI,WebUIOmniboxPopup,WebUIOmniboxAimPopup',
  // The network service inside the browser process: one process less (about 15 MB). Every
  // request still goes through the session's egress proxy.
  '--enable-features=NetworkServiceInProcess2',
  '--password-store=basic',
  '--force-device-scale-factor=1',
  '--in-process-gpu',
  // One zygote, not two: utility processes start without the unsandboxed one (about 14 MB).
  '--no-unsandboxed-zygote',
  // Loopback is otherwise sent around the proxy; the egress guard must see every request.
  '--proxy-bypass-list=<-loopback>',
  // WebRTC sends nothing the egress route does not see (the policy says so too when confined).
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  // Sound plays without a gesture first (sound.ts): nothing is heard unless a viewer chooses to
  // listen, and the viewer's own browser asks for that gesture; a throwaway profile has no media
  // engagement, so Chromium's policy would otherwise silence every page that starts sound itself.
  // (No --mute-audio: that is Playwright's default, never the engine's.)
  '--autoplay-policy=no-user-gesture-required',
  '--remote-debugging-port=0',
  '--remote-debugging-address=127.0.0.1',
];

// Only an unconfined session (an operator's explicit, logged opt-in) runs as root, where
// Chromium's own sandbox cannot start. Confined sessions keep it on.
const UNCONFINED_FLAGS = [
  '--no-sandbox',
  '--test-type', // hides the "unsupported command-line flag" bar that --no-sandbox would show
];

/**
 * Chromium opens `firstUrl` itself (an http or https address, checked before), so the page loads
 * while DevTools connects; the DevTools guard covers every later navigation.
 */
async function launchChromium(launch: BrowserLaunch, firstUrl: string): Promise<BrowserProcess> {
  const { sandbox } = launch;
  // Fail closed: a confined Chromium without its policies would offer what they take away.
  if (sandbox.confined && !sandbox.chromiumPolicies) {
    throw new Error(`${launch.image.name} cannot start confined: its policy directory /etc/chromium is missing on this host (reinstall the chromium package)`);
  }
  const profile = join(sandbox.dir, 'profile');
  const env = browserEnvironment(launch);
  const process = sandbox.spawn(launch.image.id, launch.image.executable!, [
    ...CHROMIUM_FLAGS,
    ...(sandbox.confined ? [] : UNCONFINED_FLAGS),
    `--user-data-dir=${profile}`,
    `--proxy-server=${sandbox.proxyUrl}`,
    // The interface (menus, dialogs, error and new-tab pages) from the locale's pack.
    `--lang=${launch.locale}`,
    `--accept-lang=${launch.language}`,
    '--window-position=0,0',
    `--window-size=${launch.width},${launch.height}`,
    '--start-maximized',
    // Its sound in 256-frame buffers (5.3 ms at 48 kHz) instead of 512: sound reaches the
    // session's PulseAudio sooner (docs/benchmarks.md, "sound").
    ...(launch.sound ? ['--audio-buffer-size=256'] : []),
    ...(launch.restoreTabs ? ['--restore-last-session'] : []),
    ...(launch.window === 'app' ? ['--kiosk'] : []),
    ...(launch.restoreTabs && firstUrl === 'about:blank' ? [] : [firstUrl]),
    // Its own helpers (zygote, crash handler) live beside it; nothing else may start.
  ], { env, mayRun: [dirname(await realpath(launch.image.executable!))], part: true });
  // Its reader starts beside the browser (a few ms of the other core) and is ready when DevTools answers.
  const reader = new BrowserReader();
  const failed = (error: Error) => {
    signalProcess(process, 'SIGKILL');
    void reader.stop();
    throw new Error(`${launch.image.name} did not start: ${error.message}${process.stderrTail() ? `\n${process.stderrTail()}` : ''}`);
  };
  const endpoint = waitForDevToolsPort(sandbox, profile, process);
  endpoint.catch(() => undefined);
  // Ready to be seen: the browser's window is on the display (the page itself may still be
  // loading, or never load: the person sees the browser's own progress or error). Chromium maps
  // it some 150 ms after DevTools answers, so it is looked for from then on, while the engine
  // connects: each look starts a program in the session, and looking from the launch would start
  // a dozen more on the cores the browser is starting on.
  const windowShown = withTimeout(endpoint.then(() => waitForWindow(sandbox, env, process, ANY_WINDOW)), launch.timeoutMs, `${launch.image.name}'s window`).catch(failed);
  windowShown.catch(() => undefined);
  const devtoolsUrl = await withTimeout(
    endpoint.then((found) => reachDevTools(sandbox, found, process)),
    launch.timeoutMs,
    `${launch.image.name}'s DevTools endpoint`,
  ).catch(failed);
  return { image: launch.image, process, devtoolsUrl, reader, bidi: null, windowShown, stop: stopper(process, reader) };
}

/**
 * What one DevTools connection of the engine reads from the browser a second at most: far above
 * what a guard or a program needs (a full-page screenshot is a few MB), and a bound on what a
 * browser made to flood costs the engine.
 */
const DEVTOOLS_BYTES_PER_SECOND = 64 * 1024 * 1024;

/**
 * The engine's address of a protocol end the browser serves on its loopback (Chromium's DevTools,
 * Firefox's remote agent; `socketName` names the engine's socket). Confined, it listens on the session's own loopback, which
 * nothing outside its network namespace reaches: the engine listens on a socket of its own, in
 * its root-only directory for the session, and joins each connection to DevTools through a relay
 * inside the session (SessionSandbox.connect). Closed with the browser.
 */
async function reachDevTools(sandbox: SessionSandbox, endpoint: { port: number; path: string }, browser: SupervisedProcess, socketName = 'devtools.sock'): Promise<string> {
  if (!sandbox.confined) return `ws://127.0.0.1:${endpoint.port}${endpoint.path}`;
  const socketPath = join(sandbox.hostDir, socketName);
  const server = createServer((client) => {
    const devtools = sandbox.connect(endpoint.port);
    client.pipe(devtools);
    // What the browser says is read at a bounded pace (a process of the session can trace the
    // browser and make it say anything), and no faster than the engine's side takes it.
    readWithinBudget(devtools, DEVTOOLS_BYTES_PER_SECOND, (chunk) => {
      if (!client.write(chunk)) {
        devtools.pause();
        client.once('drain', () => devtools.resume());
      }
    });
    const end = () => {
      client.destroy();
      devtools.destroy();
    };
    client.once('close', end).on('error', end);
    devtools.once('close', end).on('error', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  server.on('error', () => undefined);
  void browser.exited.then(() => server.close());
  return `ws+unix://${socketPath}:${endpoint.path}`;
}

/**
 * Chromium writes "<port>\n<path>" to DevToolsActivePort in the profile once DevTools listens.
 * Confined, the file is in the session's own directory: the engine only sees that it is there,
 * and a program inside the session reads it (a link left there leads nowhere outside).
 */
async function waitForDevToolsPort(sandbox: SessionSandbox, profile: string, process: SupervisedProcess): Promise<{ port: number; path: string }> {
  let exited = false;
  void process.exited.then(() => (exited = true));
  const file = join(profile, 'DevToolsActivePort');
  for (;;) {
    if (exited) throw new Error('the browser exited during start');
    const present = await lstat(sandbox.hostPath(file)).then(() => true, () => false);
    if (present) {
      const text = sandbox.confined ? await sandbox.run('cat', [file], sandbox.env).catch(() => '') : await readFile(file, 'utf8').catch(() => '');
      const [port, path] = text.split('\n');
      if (port && /^\d+$/.test(port) && path?.startsWith('/devtools/')) return { port: Number(port), path };
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

function firefoxPreferences(launch: BrowserLaunch): string {
  const proxy = new URL(launch.sandbox.proxyUrl);
  const prefs: Record<string, string | number | boolean> = {
    'network.proxy.type': 1,
    'network.proxy.http': proxy.hostname,
    'network.proxy.http_port': Number(proxy.port),
    'network.proxy.ssl': proxy.hostname,
    'network.proxy.ssl_port': Number(proxy.port),
    'network.proxy.share_proxy_settings': true,
    'network.proxy.no_proxies_on': '',
    // Without this Firefox sends loopback around the proxy, past the egress guard.
    'network.proxy.allow_hijacking_localhost': true,
    'network.dns.disablePrefetch': true,
    'network.prefetch-next': false,
    'network.captive-portal-service.enabled': false,
    'network.connectivity-service.enabled': false,
    // The interface from the installed language pack (Debian's firefox-esr-l10n-*).
    'intl.locale.requested': launch.locale,
    'intl.accept_languages': launch.language,
    'browser.shell.checkDefaultBrowser': false,
    'browser.startup.homepage_override.mstone': 'ignore',
    'browser.aboutwelcome.enabled': false,
    'browser.sessionstore.resume_from_crash': false,
    // A saved profile's tabs (decisions.md 89): the last session comes back, every tab loaded.
    ...(launch.restoreTabs ? { 'browser.startup.page': 3, 'browser.sessionstore.restore_on_demand': false } : {}),
    'browser.tabs.warnOnClose': false,
    // Quit asks nothing: a saved profile's session is ended by its Ctrl+Q (session-profile.ts).
    'browser.warnOnQuit': false,
    'browser.warnOnQuitShortcut': false,
    'browser.newtabpage.enabled': false,
    'browser.safebrowsing.malware.enabled': false,
    'browser.safebrowsing.phishing.enabled': false,
    'datareporting.policy.dataSubmissionEnabled': false,
    'datareporting.healthreport.uploadEnabled': false,
    'toolkit.telemetry.reportingpolicy.firstRun': false,
    'app.update.enabled': false,
    'extensions.update.enabled': false,
    'app.normandy.enabled': false,
    'browser.ping-centre.telemetry': false,
    // Sound plays without a gesture first, as in Chromium (--autoplay-policy): listening is the viewer's choice.
    'media.autoplay.default': 0,
    'media.autoplay.block-webaudio': false,
  };
  return Object.entries(prefs)
    .map(([key, value]) => `user_pref(${JSON.stringify(key)}, ${JSON.stringify(value)});`)
    .join('\n');
}

async function launchFirefox(launch: BrowserLaunch, firstUrl: string): Promise<BrowserProcess> {
  const { sandbox } = launch;
  const profile = join(sandbox.dir, 'profile');
  // 'wx': created afresh, never through a link left in the session's directory.
  await writeFile(sandbox.hostPath(join(profile, 'user.js')), firefoxPreferences(launch), { flag: 'wx' });
  const env = browserEnvironment(launch);
  // The remote agent (WebDriver BiDi on the session's own loopback, port chosen by Firefox) runs
  // only for programs (`automation: true`, the automation channel) and an app window's tabs
  // (firefox-tabs.ts): with it on, pages read navigator.webdriver === true, and it needs the
  // launcher's agent build, whose AutoConfig lets it start under the policies (decisions.md 103, 143, 155).
  const agent = launch.automation === true || launch.window === 'app';
  // Firefox with the session's policies: they refuse local files and lock the proxy (firefox-launcher.ts).
  const executable = await prepareFirefox(launch.image, sandbox, launch.locale, agent);
  const process = sandbox.spawn(launch.image.id, executable, [
    '-profile', profile, '-no-remote', '-new-instance', '-width', String(launch.width), '-height', String(launch.height),
    ...(agent ? ['--remote-debugging-port=0'] : []),
    ...(launch.window === 'app' ? ['--kiosk'] : []),
    ...(launch.restoreTabs && firstUrl === 'about:blank' ? [] : [firstUrl]),
    // Only the launcher copy itself (content processes are copies of it): the system's Firefox,
    // which has no policies of the session's, cannot start.
  ], { env, mayRun: [executable], part: true });
  // The agent's connection is read in the session's reader, started beside the browser.
  const reader = agent ? new BrowserReader() : null;
  const failed = (error: Error): never => {
    signalProcess(process, 'SIGKILL');
    void reader?.stop();
    throw new Error(`${launch.image.name} did not start: ${error.message}${process.stderrTail() ? `\n${process.stderrTail()}` : ''}`);
  };
  // Firefox has no DevTools connection here; its own signal is its browser window being mapped.
  await withTimeout(waitForWindow(sandbox, env, process, FIREFOX_WINDOW), launch.timeoutMs, `${launch.image.name}'s window`).catch(failed);
  // Its remote agent listens by then (it writes its port before the window is mapped).
  const bidi = !agent ? null : await agentPort(sandbox, launch.timeoutMs)
    .then(async (port) => {
      const url = await reachDevTools(sandbox, { port, path: AGENT_PATH }, process, 'bidi.sock');
      const host = `127.0.0.1:${port}`;
      return { url, host, hub: new BiDiHub(url, host, reader ? { reader } : {}) };
    })
    .catch(failed);
  return { image: launch.image, process, devtoolsUrl: null, reader, bidi, windowShown: Promise.resolve(), stop: stopper(process, reader) };
}

/** Firefox's browser window (its other windows are not the one a person uses). */
const FIREFOX_WINDOW = 'Navigator';
/** The browser is the only program with windows on a session's display: any visible one is it. */
const ANY_WINDOW = '.';

/** Resolves once a visible window whose class name matches `classname` is mapped on the display. */
async function waitForWindow(sandbox: SessionSandbox, env: NodeJS.ProcessEnv, process: SupervisedProcess, classname: string): Promise<void> {
  let exited = false;
  void process.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error('the browser exited during start');
    const found = await sandbox.run('xdotool', ['search', '--onlyvisible', '--classname', classname], env).catch(() => '');
    if (found.trim()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The empty page a warm Chromium waits on. Not about:blank: Chromium gives a tab showing that (or
 * its new-tab page) to the address bar's focus, and keeps it there through a navigation from
 * DevTools, so a warm session's first keys would go to the address bar; on this page the tab has
 * the focus, as in a browser started on an address.
 */
export const WARM_PAGE = 'data:text/html,';

/** Starts the image's browser on `firstUrl` (http, https, about:blank or the warm page). */
export function launchBrowser(launch: BrowserLaunch, firstUrl: string): Promise<BrowserProcess> {
  if (!launch.image.enabled || !launch.image.executable) {
    return Promise.reject(new Error(`${launch.image.name} is not available on this host: ${launch.image.reason ?? 'unknown reason'}`));
  }
  return launch.image.family === 'chromium' ? launchChromium(launch, firstUrl) : launchFirefox(launch, firstUrl);
}
