// The exec guard: every process of a confined session starts through it, and from then on it and
// everything it starts may execute only the programs named for it (docs/security.md, "Only the
// session's own programs run"). The kernel enforces it with Landlock (Linux 5.13+): a ruleset
// that handles only the right to execute, with one rule per allowed program or directory, applied
// to the process for good just before it becomes the program. Whatever a browser or a person
// reaches for later (xdg-open, "Open with", a protocol handler, a shell, a compiler, the system's
// Firefox or a second Chromium) fails in execve with EACCES, whichever way it was asked for.
//
// Landlock sees only files in the file system: a memfd (memory with a file descriptor, which any
// program can fill with a copy of /bin/sh) lies outside it. So the guard also makes sure no memfd
// of the session can be executed: where the kernel has vm.memfd_noexec (Linux 6.3+), the session's
// pid namespace has it at 2, set by the sandbox before any program of the session runs (every
// memfd is then made non-executable, for good); elsewhere the guard refuses memfd_create itself
// with a seccomp filter (programs fall back to /dev/shm, which is noexec). It refuses to start a
// program when it can do neither.
//
// The guard also gives the process a kernel session keyring of its own, so no key of the
// engine's login session is reachable from a session, and (Landlock ABI 6+) scopes signals: a
// program of the session can signal only what it started itself, so a browser cannot end the
// relays or the display beside it.
//
// It is a short Perl program because Perl (perl-base) is part of every Debian system and can make
// the Landlock, keyring and seccomp system calls itself: nothing to compile, ship or keep in step
// per platform.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const PERL = '/usr/bin/perl';
const UNSHARE = '/usr/bin/unshare';

/**
 * The kernel setting (Linux 6.3+, one value per pid namespace) that, at 2, makes every memfd
 * created in the namespace non-executable and sealed so (no chmod can change it), and refuses
 * MFD_EXEC. A namespace can raise it but never go below its parent's: nothing the session starts,
 * nor any namespace it makes, can lower it. Only root with CAP_SYS_ADMIN in the user namespace
 * owning the pid namespace can set it, which the session's sandbox is and its programs are not.
 */
export const MEMFD_NOEXEC = '/proc/sys/vm/memfd_noexec';

/** What the guard needs to know of the architecture it runs on (the engine knows it; Perl's Config would cost 3 ms a start). */
interface GuardArchitecture {
  /** The AUDIT_ARCH_ value a seccomp filter sees for this architecture's native system calls. */
  auditArch: number;
  keyctl: number;
  prctl: number;
  /** memfd_create's numbers (on x86-64 also its x32 one, which a native program can call too). */
  memfdCreate: number[];
}

const ARCHITECTURES: Partial<Record<NodeJS.Architecture, GuardArchitecture>> = {
  x64: { auditArch: 0xc000003e, keyctl: 250, prctl: 157, memfdCreate: [319, 0x40000000 | 319] },
  arm64: { auditArch: 0xc00000b7, keyctl: 219, prctl: 167, memfdCreate: [279] },
  riscv64: { auditArch: 0xc00000f3, keyctl: 219, prctl: 167, memfdCreate: [279] },
  loong64: { auditArch: 0xc0000102, keyctl: 219, prctl: 167, memfdCreate: [279] },
};

/**
 * The seccomp program the guard loads where vm.memfd_noexec is not at 2: memfd_create fails with
 * ENOSYS, as on a kernel without it, so programs take their fallback (the browsers make their
 * shared memory in /dev/shm, which is noexec); a system call of another architecture's table (a
 * 64-bit program can make 32-bit ones) fails the same way, so none of them reaches memfd_create by
 * another number. Everything else is allowed. Empty where the engine does not know the
 * architecture: the guard then refuses to start anything unless the sysctl protects the session.
 */
export function memfdFilter(arch: NodeJS.Architecture = process.arch): Buffer {
  const known = ARCHITECTURES[arch];
  if (!known) return Buffer.alloc(0);
  const LOAD_WORD = 0x20; // BPF_LD | BPF_W | BPF_ABS
  const JUMP_IF_EQUAL = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
  const RETURN = 0x06; // BPF_RET | BPF_K
  const ALLOW = 0x7fff0000;
  const REFUSE = 0x00050000 | 38; // SECCOMP_RET_ERRNO | ENOSYS
  const refused = known.memfdCreate;
  // seccomp_data: the system call's number at offset 0, the architecture at offset 4. The refusal
  // is the last instruction: each jump below counts the instructions it skips to reach it.
  const program: Array<[number, number, number, number]> = [
    [LOAD_WORD, 0, 0, 4],
    [JUMP_IF_EQUAL, 0, refused.length + 2, known.auditArch],
    [LOAD_WORD, 0, 0, 0],
    ...refused.map((number, index): [number, number, number, number] => [JUMP_IF_EQUAL, refused.length - index, 0, number]),
    [RETURN, 0, 0, ALLOW],
    [RETURN, 0, 0, REFUSE],
  ];
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jumpIfTrue, jumpIfFalse, value], index) => {
    bytes.writeUInt16LE(code, index * 8);
    bytes.writeUInt8(jumpIfTrue, index * 8 + 2);
    bytes.writeUInt8(jumpIfFalse, index * 8 + 3);
    bytes.writeUInt32LE(value >>> 0, index * 8 + 4);
  });
  return bytes;
}

/**
 * Arguments: `<keyctl's number> <prctl's number> <memfd filter, hex> <n> <allowed path>... <command> <args>...`.
 * Resolves `command` through PATH as the session sees it; makes sure no memfd can run (the pid
 * namespace's vm.memfd_noexec at 2, or else the seccomp filter); allows the command, the allowed
 * paths (a directory: everything under it) and the ELF loaders; restricts itself; then becomes
 * the command. Exits 126 (with a reason on stderr) when it cannot confine: it never runs a program
 * unguarded. Kept on one line per statement, no comments inside: it travels as a command-line
 * argument.
 */
const GUARD_SCRIPT = [
  'use strict;',
  'sub fail { print STDERR "exec guard: $_[0]\\n"; exit 126 }',
  'my $keyctl = shift @ARGV; my $prctl = shift @ARGV; my $filter = pack("H*", shift @ARGV); my $n = shift @ARGV; my @allow = splice(@ARGV, 0, $n); my $cmd = $ARGV[0];',
  'defined $cmd or fail("no command");',
  'my $path = $cmd;',
  'if ($cmd !~ m{/}) { ($path) = grep { -f $_ && -x _ } map { "$_/$cmd" } split(/:/, $ENV{PATH} // "/usr/bin:/bin"); defined $path or fail("$cmd: not found"); }',
  '$keyctl and syscall($keyctl, 1, 0) < 0 and fail("no session keyring of its own: $!");',
  `my $noexec = 0; if (open(my $sysctl, "<", "${MEMFD_NOEXEC}")) { $noexec = <$sysctl>; }`,
  'if ($noexec != 2) { $prctl && length($filter) or fail("memfds would be executable here: vm.memfd_noexec is not 2 and this architecture has no memfd filter"); syscall($prctl, 22, 2, pack("Sx6P", length($filter) / 8, $filter), 0, 0) == 0 or fail("seccomp (refusing memfd_create): $!"); }',
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
  const arch = ARCHITECTURES[process.arch];
  return [
    PERL,
    ['-e', GUARD_SCRIPT, '--', String(arch?.keyctl ?? 0), String(arch?.prctl ?? 0), memfdFilter().toString('hex'), String(mayRun.length), ...mayRun, command, ...args],
  ];
}

/** How this host keeps a session's memfds from running: which protection, in words for `doctor`. */
export function memfdProtection(): { kind: 'sysctl' | 'seccomp' | 'none'; detail: string } {
  if (existsSync(MEMFD_NOEXEC)) {
    return { kind: 'sysctl', detail: 'vm.memfd_noexec at 2 in each session\'s pid namespace (Linux 6.3+): no memfd of a session can be executed' };
  }
  if (ARCHITECTURES[process.arch]) {
    return { kind: 'seccomp', detail: 'this kernel has no vm.memfd_noexec (before Linux 6.3): the exec guard refuses memfd_create in every program of a session (seccomp)' };
  }
  return { kind: 'none', detail: `this kernel has no vm.memfd_noexec (Linux 6.3+) and the exec guard has no memfd filter for ${process.arch}: sessions cannot be confined` };
}

/** Whether this host can guard sessions' programs: Perl, Landlock and a memfd protection; `reason` says what is missing. */
export function probeExecGuard(): { available: boolean; reason?: string } {
  if (!existsSync(PERL)) return { available: false, reason: 'Perl for the exec guard: apt-get install -y perl-base' };
  // The guard's test of itself, on `true`, as a session's program starts: with no_new_privs, and
  // (where the kernel has it, and this is root) in a pid namespace of its own with vm.memfd_noexec
  // at 2, as the sandbox sets it; elsewhere with its seccomp filter.
  const [command, args] = guardedCommand('/bin/true', []);
  const guarded = ['/usr/bin/setpriv', '--no-new-privs', '--', command, ...args];
  const asSession = existsSync(MEMFD_NOEXEC) && process.getuid?.() === 0 && existsSync(UNSHARE)
    ? [UNSHARE, '--pid', '--fork', '--', '/bin/sh', '-c', `echo 2 > ${MEMFD_NOEXEC} && exec "$@"`, 'sh', ...guarded]
    : guarded;
  const result = spawnSync(asSession[0]!, asSession.slice(1), { encoding: 'utf8', timeout: 5000 });
  if (result.status === 0) return { available: true };
  return {
    available: false,
    reason: `the exec guard (Landlock, Linux 5.13 or later, with landlock in the kernel's lsm= list; and vm.memfd_noexec, Linux 6.3+, or seccomp): ${(result.stderr || result.error?.message || `exit ${result.status}`).trim()}`,
  };
}
