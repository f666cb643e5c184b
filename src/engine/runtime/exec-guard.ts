// The exec guard: every process of a confined session starts through it, and from then on it and
// everything it starts may execute only the programs named for it (docs/security.md, "Only the
// session's own programs run"). The kernel enforces it with Landlock (Linux 5.13+): a ruleset
// that handles only the right to execute, with one rule per allowed program or directory, applied
// to the process for good just before it becomes the program. Whatever a browser or a person
// reaches for later (xdg-open, "Open with", a protocol handler, a shell, a compiler, the system's
// Firefox or a second Chromium) fails in execve with EACCES, whichever way it was asked for.
//
// The guard also gives the process a kernel session keyring of its own, so no key of the
// engine's login session is reachable from a session, and (Landlock ABI 6+) scopes signals: a
// program of the session can signal only what it started itself, so a browser cannot end the
// relays or the display beside it.
//
// It is a short Perl program because Perl (perl-base) is part of every Debian system and can make
// the three Landlock system calls itself: nothing to compile, ship or keep in step per platform.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const PERL = '/usr/bin/perl';

/**
 * keyctl's system call number where it differs by architecture (Landlock's are the same on all).
 * Given to the guard by the engine, which knows its architecture: Perl's own Config module would
 * cost 3 ms of every start. Elsewhere the guard gives no keyring of its own (docs/security.md).
 */
const KEYCTL: Partial<Record<NodeJS.Architecture, number>> = { x64: 250, arm64: 219, riscv64: 219, loong64: 219 };

/**
 * Arguments: `<keyctl's system call number> <n> <allowed path>... <command> <args>...`. Resolves `command` through PATH as the
 * session sees it, allows it, the allowed paths (a directory: everything under it) and the ELF
 * loaders, restricts itself, then becomes the command. Exits 126 (with a reason on stderr) when it
 * cannot confine: it never runs a program unguarded. Kept on one line per statement, no comments
 * inside: it travels as a command-line argument.
 */
const GUARD_SCRIPT = [
  'use strict;',
  'sub fail { print STDERR "exec guard: $_[0]\\n"; exit 126 }',
  'my $keyctl = shift @ARGV; my $n = shift @ARGV; my @allow = splice(@ARGV, 0, $n); my $cmd = $ARGV[0];',
  'defined $cmd or fail("no command");',
  'my $path = $cmd;',
  'if ($cmd !~ m{/}) { ($path) = grep { -f $_ && -x _ } map { "$_/$cmd" } split(/:/, $ENV{PATH} // "/usr/bin:/bin"); defined $path or fail("$cmd: not found"); }',
  '$keyctl and syscall($keyctl, 1, 0) < 0 and fail("no session keyring of its own: $!");',
  'my $abi = syscall(444, 0, 0, 1);',
  '$abi >= 1 or fail("Landlock is not available in this kernel: $!");',
  'my $attr = $abi >= 6 ? pack("QQQ", 1, 0, 2) : pack("Q", 1);',
  'my $ruleset = syscall(444, $attr, length($attr), 0);',
  '$ruleset >= 0 or fail("landlock_create_ruleset: $!");',
  'for my $allowed ($path, @allow, glob("/lib64/ld-linux*.so* /lib/ld-linux*.so*")) {',
  '  sysopen(my $fh, $allowed, 0x280000) or next;',
  '  my $rule = pack("Ql", 1, fileno($fh));',
  '  syscall(445, $ruleset, 1, $rule, 0) == 0 or fail("landlock_add_rule $allowed: $!");',
  '  close($fh);',
  '}',
  'syscall(446, $ruleset, 0) == 0 or fail("landlock_restrict_self: $!");',
  'exec { $path } @ARGV or fail("$cmd: $!");',
].join('\n');

/**
 * The command line that runs `command args` (a path, or a name found through PATH) under the exec
 * guard, allowed to execute itself and `mayRun` (programs, or directories of them) and nothing
 * else. It must start after the drop to the session uid (no_new_privs is what lets an unprivileged
 * process restrict itself).
 */
export function guardedCommand(command: string, args: readonly string[], mayRun: readonly string[] = []): [string, string[]] {
  return [PERL, ['-e', GUARD_SCRIPT, '--', String(KEYCTL[process.arch] ?? 0), String(mayRun.length), ...mayRun, command, ...args]];
}

/** Whether this host can guard sessions' programs: Perl and Landlock; `reason` says what is missing. */
export function probeExecGuard(): { available: boolean; reason?: string } {
  if (!existsSync(PERL)) return { available: false, reason: 'Perl for the exec guard: apt-get install -y perl-base' };
  // no_new_privs as an unprivileged process would have it: the guard's test of itself, on `true`.
  const [command, args] = guardedCommand('/bin/true', []);
  const result = spawnSync('/usr/bin/setpriv', ['--no-new-privs', '--', command, ...args], { encoding: 'utf8', timeout: 5000 });
  if (result.status === 0) return { available: true };
  return {
    available: false,
    reason: `the exec guard (Landlock, Linux 5.13 or later, with landlock in the kernel's lsm= list): ${(result.stderr || result.error?.message || `exit ${result.status}`).trim()}`,
  };
}
