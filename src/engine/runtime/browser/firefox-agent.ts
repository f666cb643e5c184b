// Firefox ESR's remote agent (WebDriver BiDi), started in sessions created with `automation: true` and in app windows (decisions.md 143).
// Firefox's DisableDeveloperTools policy, which every session keeps (it also blocks about:debugging,
// about:devtools-toolbox and about:profiling), locks `remote.policy.disabled` on and so stops the
// agent; an agent build of the launcher directory (firefox-launcher.ts) adds an AutoConfig file
// that locks that one preference off again once the policies are applied and before the agent
// reads it (decisions.md 155). Firefox writes the agent's port to `WebDriverBiDiServer.json` in the profile once it listens on
// the session's own loopback; the file is read inside a confined session, as Chromium's
// DevToolsActivePort is. The agent's WebSocket is at `/session`, and it holds ONE WebDriver BiDi
// session at a time (a second `session.new` is answered "session not created: Maximum number of
// active sessions", and `/session/<id>` is not served for a BiDi-only session; measured on 153.8.0esr).
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SessionSandbox } from '../sandbox/session-sandbox.js';

/** The path of the agent's WebDriver BiDi WebSocket. */
export const AGENT_PATH = '/session';

/** The remote agent's port, from `WebDriverBiDiServer.json` in the profile once Firefox writes it. */
export async function agentPort(sandbox: SessionSandbox, timeoutMs: number): Promise<number> {
  const file = join(sandbox.dir, 'profile', 'WebDriverBiDiServer.json');
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const text = sandbox.confined ? await sandbox.run('cat', [file], sandbox.env).catch(() => '') : await readFile(file, 'utf8').catch(() => '');
    try {
      const port = (JSON.parse(text) as { ws_port?: unknown }).ws_port;
      if (Number.isInteger(port) && (port as number) > 0 && (port as number) < 65536) return port as number;
    } catch {
      // Not written yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("Firefox's remote agent did not say its port in time");
}

/** The AutoConfig files an agent build adds; the installation's own files of these names are left out. */
export const AGENT_CONFIG_PREFS = 'remote-browser-kit-agent.js';
export const AGENT_CONFIG_FILE = 'remote-browser-kit-agent.cfg';

/**
 * The AutoConfig script (its first line is skipped by Firefox). It runs as the preferences are read,
 * before the policies; Firefox applies DisableDeveloperTools at `policies-startup`, then sends
 * `profile-after-change`, then `command-line-startup`, where the remote agent reads
 * `remote.policy.disabled` (RemoteAgent.sys.mjs, 153.8.0esr). So the preference is locked off at
 * `profile-after-change`: the policy's other effects (the developer tools off, their pages blocked)
 * stand. Locked, nothing in the session changes it back.
 */
const AGENT_CONFIG = `// remote-browser-kit: the remote agent starts under the DisableDeveloperTools policy (decisions.md 155).
Services.obs.addObserver(function agentAllowed() {
  Services.obs.removeObserver(agentAllowed, "profile-after-change");
  Services.prefs.unlockPref("remote.policy.disabled");
  Services.prefs.getDefaultBranch("").setBoolPref("remote.policy.disabled", false);
  Services.prefs.lockPref("remote.policy.disabled");
}, "profile-after-change");
`;

/**
 * Gives the launcher directory `dir` (a copy of `installation`'s layout) the AutoConfig that lets
 * the agent start: `defaults/pref/` holds links to the installation's preference files plus one
 * naming the script, and the script sits beside the executable, where Firefox looks for it.
 */
export async function addAgentConfig(installation: string, dir: string): Promise<void> {
  const defaults = join(dir, 'defaults');
  await mkdir(join(defaults, 'pref'), { recursive: true, mode: 0o755 });
  for (const entry of await readdir(join(installation, 'defaults')).catch(() => [] as string[])) {
    if (entry !== 'pref') await symlink(join(installation, 'defaults', entry), join(defaults, entry));
  }
  for (const file of await readdir(join(installation, 'defaults', 'pref')).catch(() => [] as string[])) {
    if (file !== AGENT_CONFIG_PREFS) await symlink(join(installation, 'defaults', 'pref', file), join(defaults, 'pref', file));
  }
  const prefs = `pref("general.config.filename", "${AGENT_CONFIG_FILE}");\npref("general.config.obscure_value", 0);\n`;
  await writeFile(join(defaults, 'pref', AGENT_CONFIG_PREFS), prefs, { mode: 0o644 });
  await writeFile(join(dir, AGENT_CONFIG_FILE), AGENT_CONFIG, { mode: 0o644 });
}
