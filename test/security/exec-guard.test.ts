// A session runs the browser and nothing else (issue 20): entered as the engine enters it (its uid,
// namespaces and exec guard), no program but its own starts: no shell, compiler, opener, the
// system's Firefox or a second Chromium, nor anything written into the session, nor a copy of a
// program held in memory (a memfd, issue 32); the browsers keep running. Also: nothing the session
// can read names the engine's paths, and it has a kernel session keyring of its own. Real confined
// Chromium and Firefox ESR sessions; and the guard's memfd filter for kernels without
// vm.memfd_noexec, with both browsers under it.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/engine/doctor.js';
import { guardedCommand, MEMFD_NOEXEC, memfdProtection } from '../../src/engine/runtime/sandbox/exec-guard.js';
import { findMarkedProcesses } from '../../src/engine/runtime/sandbox/processes.js';
import { SessionRuntime, type RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { inSession, typeAddress, waitFor, x } from '../helpers/session.js';

const PAGE = '<!doctype html><title>Plain page</title><body><p>plain</p>';

/** Programs a browser, or a person through it, has reached for: each must fail to start. */
const REACHED_FOR = [
  '/bin/sh',
  '/usr/bin/bash',
  '/usr/bin/xdg-open',
  '/usr/bin/x-www-browser',
  '/usr/bin/gio',
  '/usr/lib/firefox-esr/firefox-esr',
  '/usr/bin/chromium',
  '/usr/lib/chromium/chromium',
  '/usr/bin/gcc',
  '/usr/bin/python3',
].filter((path) => existsSync(path));

/**
 * Run in the session as the engine runs its programs: writes a copy of `true` and a script into
 * the downloads folder, marks them executable, then tries to execute every program named, and
 * `true`'s copy through the dynamic loader (which maps it as code). Prints `path<TAB>outcome`.
 */
const PROBE = `
use strict;
sub copy { my ($from, $to) = @_; open(my $in, "<", $from) or die; binmode $in; local $/; my $bytes = <$in>; open(my $out, ">", $to) or die "$to: $!"; binmode $out; print $out $bytes; close $out; chmod 0755, $to; }
copy("/bin/true", "/session/downloads/true");
open(my $script, ">", "/session/downloads/run.sh") or die; print $script "#!/bin/sh\\necho ran\\n"; close $script; chmod 0755, "/session/downloads/run.sh";
my ($loader) = glob("/lib64/ld-linux*.so*");
for my $try ((map { [$_] } @ARGV, "/session/downloads/true", "/session/downloads/run.sh"), [$loader, "/session/downloads/true"]) {
  my $pid = fork;
  if ($pid == 0) { open(STDERR, ">", "/dev/null"); exec { $try->[0] } @$try, "--version"; print "@$try\\trefused: $!\\n"; exit 99 }
  waitpid($pid, 0);
  my $code = $? >> 8;
  print "@$try\\tran (exit $code)\\n" if $code != 99;
}
`;

/** Programs copied into memory and tried from there: a shell, and a whole interpreter if present. */
const COPIED = [
  ['/bin/sh', '-c', 'exit 0'],
  ['/usr/bin/python3', '-c', 'pass'],
].filter(([path]) => existsSync(path!));

/** memfd_create's and execveat's system call numbers (execveat(fd, "", ..., AT_EMPTY_PATH) is what fexecve uses). */
const [MEMFD_CREATE, EXECVEAT] = process.arch === 'x64' ? [319, 322] : [279, 281];

/**
 * Run in the session as the engine runs its programs: copies each program named into a memfd
 * (memfd_create with no flags, as an attacker would), tries to make it executable, then executes
 * it through /proc/self/fd/N and through execveat on the descriptor. Arguments: memfd_create's and
 * execveat's numbers, then `program arg arg` triples. Prints `program<TAB>way<TAB>outcome`.
 */
const MEMFD_PROBE = `
use strict;
$^F = 1023;
my ($memfd_create, $execveat) = splice(@ARGV, 0, 2);
our @open;
while (my ($program, @args) = splice(@ARGV, 0, 3)) {
  for my $way ("/proc/self/fd", "execveat") {
    my $name = "copy";
    my $fd = syscall($memfd_create, $name, 0);
    if ($fd < 0) { print "$program\t$way\trefused at memfd_create: $!\n"; next }
    open(my $in, "<", $program) or die "$program: $!"; binmode $in; local $/; my $bytes = <$in>;
    open(my $out, ">&=", $fd) or die "memfd: $!"; binmode $out; print $out $bytes; $out->flush; push @open, $out;
    chmod 0755, "/proc/self/fd/$fd";
    my $pid = fork;
    if ($pid == 0) {
      open(STDERR, ">", "/dev/null");
      if ($way eq "execveat") { my $empty = ""; my $argv = pack("p*", $program, @args, undef); my $envp = pack("p", undef); syscall($execveat, $fd, $empty, $argv, $envp, 0x1000); }
      else { exec { "/proc/self/fd/$fd" } $program, @args; }
      print "$program\t$way\trefused: $!\n"; exit 99;
    }
    waitpid($pid, 0);
    my $code = $? >> 8;
    print "$program\t$way\tran (exit $code)\n" if $code != 99;
  }
}
`;

let target: Server;
let origin: string;
let dataDir: string;
let runtime: SessionRuntime;

beforeAll(async () => {
  target = createServer((request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  dataDir = await mkdtemp(join(tmpdir(), 'rbk-exec-guard-'));
  ({ runtime } = await SessionRuntime.open({ root: join(dataDir, 'sessions'), egress: { allow: ['127.0.0.1/32'] } }));
});

afterAll(async () => {
  await runtime?.close();
  await new Promise((resolve) => target?.close(resolve));
  await rm(dataDir, { recursive: true, force: true });
});

/** What each program of REACHED_FOR (and the written ones) did when the session tried it. */
async function tryPrograms(session: RuntimeSession): Promise<Map<string, string>> {
  const output = await inSession(session, 'perl', ['-e', PROBE, ...REACHED_FOR]);
  return new Map(output.trim().split('\n').map((line) => line.split('\t') as [string, string]));
}

/** What each copy of COPIED did when the session tried it from a memfd, by `program way`. */
async function tryMemfdCopies(run: (command: string, args: string[]) => Promise<string>): Promise<Map<string, string>> {
  const output = await run('perl', ['-e', MEMFD_PROBE, '--', String(MEMFD_CREATE), String(EXECVEAT), ...COPIED.flat()]);
  return new Map(output.trim().split('\n').map((line) => {
    const [program, way, outcome] = line.split('\t');
    return [`${program} ${way}`, outcome ?? ''] as [string, string];
  }));
}

/** Every try of every copy refused: at memfd_create (the seccomp filter) or at execution (the sysctl). */
function expectMemfdCopiesRefused(outcomes: Map<string, string>): void {
  expect(outcomes.size).toBe(COPIED.length * 2);
  for (const [program] of COPIED) {
    for (const way of ['/proc/self/fd', 'execveat']) {
      expect(outcomes.get(`${program} ${way}`), `${program} through ${way}`).toMatch(/^refused( at memfd_create: Function not implemented|: Permission denied)$/);
    }
  }
}

/** The programs the session's live processes run (a browser starts more of its own over time). */
async function sessionPrograms(session: RuntimeSession): Promise<string[]> {
  const commands = (await findMarkedProcesses({ dir: session.dir })).filter((p) => !p.zombie).map((p) => p.command.split(' ')[0] ?? '');
  return [...new Set(commands)].sort();
}

describe.each([
  ['Chromium', 'chromium', /chromium/],
  ['Firefox ESR', 'firefox-esr', /firefox/],
])('a confined %s session', (_name, image, browser) => {
  let session: RuntimeSession;

  beforeAll(async () => {
    session = await runtime.startSession({ browser: image, url: `${origin}/`, language: 'en', layout: 'us' });
  }, 60_000);

  afterAll(async () => {
    if (session) await runtime.stopSession(session.id);
  });

  it('starts no program but its own: no shell, opener, compiler, other browser, nor anything written into it', async () => {
    const before = await sessionPrograms(session);
    const outcomes = await tryPrograms(session);
    for (const program of [...REACHED_FOR, '/session/downloads/true', '/session/downloads/run.sh']) {
      expect(outcomes.get(program), program).toMatch(/^refused: Permission denied/);
    }
    // The loader may start, but cannot map a program written into the session as code.
    expect([...outcomes.entries()].filter(([, outcome]) => outcome.startsWith('ran (exit 0)'))).toEqual([]);
    // Nothing was left running, and the browser still runs.
    expect(await sessionPrograms(session)).toEqual(before);
    expect(before.some((command) => browser.test(command))).toBe(true);
  });

  it('executes no copy of a program held in memory (memfd): not through /proc/self/fd/N, nor execveat(fd, "", AT_EMPTY_PATH)', async () => {
    const before = await sessionPrograms(session);
    const outcomes = await tryMemfdCopies((command, args) => inSession(session, command, args));
    expectMemfdCopiesRefused(outcomes);
    // Refused by the protection this host gives: made non-executable (vm.memfd_noexec), or never made (seccomp).
    const refusal = memfdProtection().kind === 'sysctl' ? 'refused: Permission denied' : 'refused at memfd_create: Function not implemented';
    for (const outcome of outcomes.values()) expect(outcome).toBe(refusal);
    expect(await sessionPrograms(session)).toEqual(before);
    // The browser, which makes its shared memory in memfds, still runs and shows pages.
    expect(before.some((command) => browser.test(command))).toBe(true);
    const { visits } = await visitsAfter(session, `${origin}/after-memfd`);
    expect(visits).toBeGreaterThan(0);
  });

  it('keeps showing pages after every refusal', async () => {
    const { visits } = await visitsAfter(session, `${origin}/after-refusals`);
    expect(visits).toBeGreaterThan(0);
  });

  it('reads nothing that names the engine\'s paths: not /proc/1/cmdline, nor its processes\' environment', async () => {
    const cmdline = await inSession(session, 'cat', ['/proc/1/cmdline']);
    expect(cmdline).toContain('bwrap');
    expect(cmdline).not.toContain(dataDir);
    const environ = await inSession(session, 'cat', ['/proc/self/environ']);
    expect(environ).toContain('RBK_SESSION=');
    expect(environ).not.toContain(dataDir);
  });

  it('has a kernel session keyring of its own, not the engine\'s', async () => {
    const keys = await inSession(session, 'cat', ['/proc/keys']);
    const sessionKeyring = keys.split('\n').find((line) => / keyring\s+_ses/.test(line));
    expect(sessionKeyring, keys).toBeDefined();
    // Fields: id, flags, usage, timeout, permissions, uid, gid, type, description.
    expect(sessionKeyring!.trim().split(/\s+/)[5]).toBe(String(session.sandbox.uid));
  });
});

/** Types `address` into the browser and counts the requests the page's server saw for it. */
async function visitsAfter(session: RuntimeSession, address: string): Promise<{ visits: number }> {
  let visits = 0;
  const path = new URL(address).pathname;
  const count = (request: { url?: string }) => {
    if (request.url === path) visits++;
  };
  target.on('request', count);
  try {
    // Keys typed while a loaded machine's browser is still busy can be lost: typed again, as a person would.
    for (let attempt = 0; attempt < 2 && visits === 0; attempt++) {
      await typeAddress(session, address);
      await waitFor(() => visits, (n) => n > 0, 12_000);
    }
  } finally {
    target.off('request', count);
  }
  return { visits };
}

// Chromium asks before it hands a link to another program ("Open xdg-open?"); a person who says
// yes still starts nothing: the opener cannot run.
describe('a confined Chromium session given links for other programs, each accepted', () => {
  it('starts no program for any of them, and keeps showing pages', async () => {
    const session = await runtime.startSession({ browser: 'chromium', url: `${origin}/`, language: 'en', layout: 'us' });
    try {
      const before = await sessionPrograms(session);
      for (const address of ['mailto:a@example.com', 'tel:+15550100', 'webcal://example.com/cal.ics', 'magnet:?xt=urn:btih:0', 'ssh://example.com']) {
        await typeAddress(session, address);
        await new Promise((r) => setTimeout(r, 700));
        // The dialog's "Open" button, as a person would press it.
        await x(session, 'xdotool', ['key', 'Tab', 'Return']);
        await new Promise((r) => setTimeout(r, 700));
      }
      const after = await waitFor(() => sessionPrograms(session), (programs) => programs.length > before.length, 2000);
      expect(after).toEqual(before);
      const { visits } = await visitsAfter(session, `${origin}/after-links`);
      expect(visits).toBeGreaterThan(0);
    } finally {
      await runtime.stopSession(session.id);
    }
  }, 90_000);
});

// Firefox is told not to hand links to other programs: a mailto: address typed into it starts
// nothing and leaves the session on a page of its own.
describe('a confined Firefox ESR session given a mailto: address', () => {
  it('hands it to no program: the session\'s processes stay the same', async () => {
    const session = await runtime.startSession({ browser: 'firefox-esr', url: `${origin}/`, language: 'en', layout: 'us' });
    try {
      const before = await sessionPrograms(session);
      await typeAddress(session, 'mailto:a@example.com');
      await new Promise((r) => setTimeout(r, 2000));
      expect(await sessionPrograms(session)).toEqual(before);
      const { visits } = await visitsAfter(session, `${origin}/after-mailto`);
      expect(visits).toBeGreaterThan(0);
    } finally {
      await runtime.stopSession(session.id);
    }
  }, 60_000);
});

// Where the kernel has no vm.memfd_noexec (before Linux 6.3), or a program starts where it is not
// at 2 (as here, on the host), the guard refuses memfd_create with seccomp instead; both browsers
// then make their shared memory elsewhere and still show pages.
describe('the exec guard where vm.memfd_noexec is not at 2', () => {
  const drop = ['--reuid=65534', '--regid=65534', '--clear-groups', '--no-new-privs', '--'];
  let home: string;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'rbk-memfd-filter-'));
    spawnSync('chmod', ['0777', home]);
  });

  afterAll(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  /** Runs `command` under the guard as an unprivileged uid outside any session (the host's pid namespace). */
  function guarded(command: string, args: string[], mayRun: string[] = [], timeout = 10_000) {
    const [guard, guardArgs] = guardedCommand(command, args, mayRun);
    return spawnSync('/usr/bin/setpriv', [...drop, guard, ...guardArgs], { encoding: 'utf8', timeout, env: { PATH: '/usr/bin:/bin', HOME: home, TMPDIR: home } });
  }

  it('refuses memfd_create itself, so no copy in memory can run', async () => {
    const outcomes = await tryMemfdCopies(async (command, args) => {
      const result = guarded(command, args);
      if (result.status !== 0) throw new Error(result.stderr);
      return result.stdout;
    });
    expectMemfdCopiesRefused(outcomes);
    for (const outcome of outcomes.values()) expect(outcome).toBe('refused at memfd_create: Function not implemented');
  });

  it('still lets Chromium start and show a page', () => {
    const result = guarded('/usr/lib/chromium/chromium', ['--headless', '--disable-gpu', `--user-data-dir=${home}/chromium`, '--dump-dom', 'data:text/html,<p>shown without memfds</p>'], ['/usr/lib/chromium'], 50_000);
    expect(result.stdout, result.stderr).toContain('<p>shown without memfds</p>');
  }, 60_000);

  it('still lets Firefox ESR start and show a page', () => {
    const result = guarded('/usr/lib/firefox-esr/firefox-esr', ['--headless', '--no-remote', '--profile', home, '--screenshot', `${home}/page.png`, 'data:text/html,<p>shown without memfds</p>'], [], 50_000);
    expect(result.status, result.stderr).toBe(0);
    expect(existsSync(`${home}/page.png`)).toBe(true);
  }, 60_000);
});

describe('remote-browser-kit doctor', () => {
  it('says which protection keeps programs copied into memory from running on this host', async () => {
    const check = (await runDoctor()).checks.find((c) => c.name.startsWith('exec guard: programs copied into memory'));
    expect(check?.ok).toBe(true);
    expect(check?.detail).toMatch(existsSync(MEMFD_NOEXEC) ? /^vm\.memfd_noexec at 2 in each session's pid namespace/ : /refuses memfd_create .*\(seccomp\)/);
  });
});
