// Firefox ESR's remote agent (WebDriver BiDi), started in sessions created with `automation: true` and in app windows (decisions.md 143):
// Firefox writes the agent's port to `WebDriverBiDiServer.json` in the profile once it listens on
// the session's own loopback; the file is read inside a confined session, as Chromium's
// DevToolsActivePort is. The agent's WebSocket is at `/session`, and it holds ONE WebDriver BiDi
// session at a time (a second `session.new` is answered "session not created: Maximum number of
// active sessions", and `/session/<id>` is not served for a BiDi-only session; measured on 153.8.0esr).
import { readFile } from 'node:fs/promises';
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
