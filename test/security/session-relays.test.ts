// The processes that carry a session's streams to the engine are out of the session's reach
// (issue 49, finding 1): a process of the session, as its own uid in its own process space (what a
// browser exploit would give a page), tries to take a descriptor of each (pidfd_getfd), to trace it
// (ptrace) and to signal it (kill), and fails every time; the same tries on a child of its own
// succeed, so the probe itself works. Real engine, confined Chromium, a viewer attached.
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { connectRfb, type RfbClient } from '../helpers/rfb-client.js';
import { inSession, waitFor } from '../helpers/session.js';

/** pidfd_open, pidfd_getfd and ptrace's system call numbers. */
const [PIDFD_OPEN, PIDFD_GETFD, PTRACE] = process.arch === 'x64' ? [434, 438, 101] : [434, 438, 117];
const PTRACE_SEIZE = 0x4206;

/**
 * Run in the session, in its process space: for every process it can see, then for each pid
 * named (the relays, as the host numbers them), then for a child of its own, tries the three ways.
 * Prints `where<TAB>pid<TAB>comm<TAB>getfd<TAB>ptrace<TAB>kill<TAB>command line`, each try `ok` or the error.
 */
const PROBE = `
use strict;
my ($pidfd_open, $pidfd_getfd, $ptrace, $seize, @host) = @ARGV;
sub comm { my ($pid) = @_; open(my $f, "<", "/proc/$pid/comm") or return "-"; my $c = <$f>; chomp $c; return $c }
sub getfd { my ($pid) = @_; my $pidfd = syscall($pidfd_open, $pid + 0, 0); return "pidfd_open: $!" if $pidfd < 0; my $fd = syscall($pidfd_getfd, $pidfd, 1, 0); return $fd < 0 ? "pidfd_getfd: $!" : "ok" }
sub trace { my ($pid) = @_; return syscall($ptrace, $seize + 0, $pid + 0, 0, 0) == 0 ? "ok" : "ptrace: $!" }
sub signal { my ($pid) = @_; return kill(0, $pid) ? "ok" : "kill: $!" }
sub cmdline { my ($pid) = @_; open(my $f, "<", "/proc/$pid/cmdline") or return "-"; local $/; my $c = <$f> // ""; $c =~ s/\\0/ /g; return $c }
sub try { my ($where, $pid, $touch) = @_; print join("\\t", $where, $pid, comm($pid), $touch ? (getfd($pid), trace($pid), signal($pid)) : ("-", "-", "-"), cmdline($pid)), "\\n" }
opendir(my $proc, "/proc") or die; try("seen", $_, 0) for grep { /^\\d+$/ && $_ != $$ } readdir $proc;
try("host", $_, 1) for @host;
my $child = fork; if ($child == 0) { sleep 30; exit 0 }
try("child", $child, 1);
kill 9, $child; waitpid($child, 0);
`;

let fixture: EngineFixture;
let session: RuntimeSession;
let viewer: RfbClient;

interface HostProcess {
  pid: number;
  comm: string;
  cmdline: string;
}

/** Processes on the host that run as `uid`, by their host pid and name. */
async function processesOf(uid: number): Promise<HostProcess[]> {
  const found: HostProcess[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = await readFile(`/proc/${name}/status`, 'utf8');
      if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== uid) continue;
      const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8')).split('\0').join(' ');
      found.push({ pid: Number(name), comm: /^Name:\s+(.*)$/m.exec(status)![1]!, cmdline });
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'session-relays' });
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/` });
  expect(created.status).toBe('ok');
  const { engine } = fixture;
  const running = await waitFor(async () => (await fixture.call(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (status) => status === 'running', 60_000);
  expect(running).toBe('running');
  const row = await engine.store.session(created.vmId);
  session = engine.runtime.get(row!.runtime_id!)!;
  // A viewer: the display's relay to it is one more carrier.
  viewer = await connectRfb(`${engine.url.replace(/^http/, 'ws')}/share/${new URL(created.shareUrl).search.slice(1)}/rfb`);
}, 120_000);

afterAll(async () => {
  viewer?.close();
  await fixture?.close();
});

it('a process of the session can neither take a descriptor of, trace nor signal any relay the engine runs in it', async () => {
  const uid = session.sandbox.uid!;
  expect(uid).toBeGreaterThan(0);
  // The relays exist: the browser's DevTools and the viewer's display, each a `socat STDIO ...` as
  // the session's uid. (The session's own egress relay, `socat TCP-LISTEN ...`, carries the
  // browser's traffic to the egress route: nothing the session cannot already do itself.)
  const relays = await waitFor(async () => (await processesOf(uid)).filter((p) => p.comm === 'socat' && p.cmdline.startsWith('/usr/bin/socat STDIO ')), (found) => found.length >= 2, 20_000);
  expect(relays.length).toBeGreaterThanOrEqual(2);

  const out = await inSession(session, '/usr/bin/perl', ['-e', PROBE, String(PIDFD_OPEN), String(PIDFD_GETFD), String(PTRACE), String(PTRACE_SEIZE), ...relays.map((p) => String(p.pid))]);
  const lines = out.trim().split('\n').map((line) => line.split('\t'));

  // The probe works: a child of its own can be taken from, traced and signalled.
  const child = lines.find(([where]) => where === 'child');
  expect(child?.slice(3, 6)).toEqual(['ok', 'ok', 'ok']);
  // The session sees its own parts (the browser among them), and no carrier at all.
  const seen = lines.filter(([where]) => where === 'seen');
  expect(seen.map(([, , comm]) => comm)).toContain('chromium');
  expect(seen.filter(([, , comm, , , , command]) => ['pactl', 'ffmpeg', 'tar', 'nsenter'].includes(comm!) || command!.includes(' STDIO '))).toEqual([]);
  // Named by the host's numbers, a relay is nothing the session can reach: each try fails (or,
  // should the number be one of the session's own, reaches that process and not the relay).
  for (const [, pid, comm, ...tries] of lines.filter(([where]) => where === 'host').map((line) => line.slice(0, 6))) {
    if (comm === '-') expect(tries, `relay ${pid}`).toEqual([expect.stringMatching(/^pidfd_open:/), expect.stringMatching(/^ptrace:/), expect.stringMatching(/^kill:/)]);
    else expect(comm, `relay ${pid}`).not.toBe('socat');
  }
  // And the relays still carry: the viewer gets the display.
  expect(await viewer.pixel(5, 5)).toHaveLength(3);
}, 60_000);
