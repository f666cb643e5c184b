// The Chromium policies every confined session runs with (docs/security.md), written once into
// the directory the engine shares read-only with every session and mounted where Debian's
// Chromium reads managed policies.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CONFINED_SESSION_DIR } from '../sandbox/confinement.js';

/**
 * The new-tab page, the one browser page a session keeps (every new tab opens it), in each of
 * Chromium's forms, with the frames it embeds. What the guard and the automation policy let a
 * person and a program open besides web pages (control.ts, channels/automation/policy.ts).
 */
const NEW_TAB_PAGES = ['chrome://newtab', 'chrome://new-tab-page', 'chrome://new-tab-page-third-party', 'chrome-untrusted://new-tab-page'];

/** The Chromium policies every confined session runs with (docs/security.md). */
export function chromiumPolicies(downloadDir: string): Record<string, unknown> {
  return {
    // Not DeveloperToolsAvailability: 2, which would also refuse the engine's own DevTools
    // connection; the engine closes developer tools windows itself (control.ts).
    DownloadDirectory: downloadDir,
    PromptForDownloadLocation: false,
    // Safe Browsing cannot work here (its lists are never fetched: --disable-background-networking);
    // left on, every download waits for a verdict under the name "Unconfirmed <n>.crdownload",
    // so a viewer could not see which file is arriving (decisions.md 57).
    SafeBrowsingProtectionLevel: 0,
    // WebRTC uses the proxy (TCP) only: no UDP that the egress route does not see.
    WebRtcIPHandling: 'disable_non_proxied_udp',
    WebRtcUdpPortRange: '',
    // The browser's own pages are refused before they commit: the guard (control.ts) sends them
    // away only once they show, and by then a script a program set for new documents had run in
    // them with their private APIs (chrome://settings: passwords, autofill; issue 32). Blocked,
    // they commit as Chromium's error page at the same address, which the guard then replaces
    // with its "not allowed" page, as before. devtools:// blocked keeps F12 from opening any
    // (decisions.md 80).
    URLBlocklist: ['file://*', 'view-source:*', 'chrome://*', 'chrome-untrusted://*', 'devtools://*'],
    URLAllowlist: NEW_TAB_PAGES,
    BrowserSignin: 0,
    SyncDisabled: true,
    BrowserAddPersonEnabled: false,
    BrowserGuestModeEnabled: false,
    ExtensionInstallBlocklist: ['*'],
    DefaultBrowserSettingEnabled: false,
    MetricsReportingEnabled: false,
    TaskManagerEndProcessEnabled: false,
    // A link to another program (mailto:, tel:, ...) is never remembered as always allowed; the
    // exec guard refuses the opener itself (exec-guard.ts).
    ExternalProtocolDialogShowAlwaysOpenCheckbox: false,
  };
}

/** Writes the files every confined session shares read-only: Chromium's policies. */
export async function writeSharedFiles(sharedHostDir: string): Promise<{ chromiumPolicyDir: string }> {
  const chromiumPolicyDir = join(sharedHostDir, 'chromium-policies');
  await mkdir(chromiumPolicyDir, { recursive: true, mode: 0o755 });
  await chmod(sharedHostDir, 0o755);
  await writeFile(join(chromiumPolicyDir, 'remote-browser-kit.json'), JSON.stringify(chromiumPolicies(join(CONFINED_SESSION_DIR, 'downloads')), null, 2), { mode: 0o644 });
  return { chromiumPolicyDir };
}

