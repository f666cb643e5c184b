// A session's files: what its browser downloaded (`/session/downloads`) and what was given to it
// (`/session/uploads`), listed, read and written only by a short Perl program started inside the
// session as its uid, under the exec guard (docs/security.md, "Files in and out"). The engine never
// opens a path of the session itself: a link, a FIFO or a device left in a folder is refused by
// that program (it opens with O_NOFOLLOW and reads only regular files), and whatever it could reach
// is what the session's own uid in its own mount view can reach, never the host's files. Bytes pass
// through its stdin and stdout, piped with back-pressure, never held whole.
import type { Readable } from 'node:stream';
import { fileNameProblem, UPLOAD_TEMPORARY_PREFIX, type FileKind, type SessionFileEntry } from '../../../protocol/files.js';
import type { SessionSandbox } from '../sandbox/confinement.js';
import { signalProcess, type SupervisedProcess } from '../sandbox/processes.js';

const PERL = '/usr/bin/perl';

/** The session's folders, under its directory. */
export const FILE_FOLDERS: Record<FileKind, string> = { download: 'downloads', upload: 'uploads' };

/**
 * How long an upload reserves ahead of the bytes it has, when its length was not announced: the
 * most a body of unknown length holds beyond what it wrote (decisions.md 77).
 */
const RESERVE_STEP = 1024 * 1024;

/** Suffixes of downloads still arriving: Chromium's, and Firefox's (which also leaves an empty file under the final name). */
const IN_PROGRESS = /\.(crdownload|part)$/;

/**
 * The random part Firefox ESR puts into the name of a download still arriving, before its last
 * extension: `report.AkNkM1eD.bin.part` while the empty `report.bin` waits for it. Its letters
 * are base64url's: `-` and `_` too (`report.XHr6d_t5.bin.part`).
 */
const FIREFOX_PART_RANDOM = /\.[A-Za-z0-9_-]{8}(?=\.[^.]*$|$)/;

/**
 * The name a download still arriving will have: its in-progress name without the suffix, and
 * without Firefox's random part when the empty file Firefox keeps under the final name is there.
 */
function arrivingName(name: string, names: ReadonlySet<string>): string {
  const bare = name.replace(IN_PROGRESS, '');
  const final = bare.replace(FIREFOX_PART_RANDOM, '');
  return final !== bare && names.has(final) && !names.has(bare) ? final : bare;
}

/**
 * The program, one statement per line (it travels as an argument). Exit codes: 2 bad request or
 * folder, 3 no such file, 4 not a regular file, 5 over the per-file cap, 6 over the session's cap,
 * 7 the session's disk is full, 8 a name that is not one plain file name, or one kept for the
 * engine's temporary files. `list kind=dir...`: one line per regular file, `kind TAB name as hex
 * TAB size TAB mtime`. `read dir name`: its size on a line, then its bytes. `write dir name perFile
 * perSession announced` (announced: the body's length, -1 when unknown): stdin into a temporary
 * file, renamed once whole; prints the size. `tidy dir`: removes the temporaries no upload holds.
 *
 * The session cap holds across uploads at once (decisions.md 77): while it holds the uploads
 * folder's lock, a write counts every regular file there, whatever its name, the temporaries of
 * uploads under way included, and sets its own temporary's size to what it reserves (the
 * announced length, or 1 MiB ahead of what it has; sparse, so nothing is written for it). Each
 * under way holds a lock on its temporary; one that no upload holds any more (its program was
 * killed) is removed by the next count, so a cut-off upload gives its room back.
 */
const FILES_SCRIPT = [
  'use strict; use Fcntl qw(:DEFAULT :mode :flock);',
  'binmode STDIN; binmode STDOUT;',
  'my $tmp;',
  'sub fail { unlink($tmp) if defined $tmp; print STDERR "$_[1]\\n"; exit $_[0] }',
  'sub least { my $m = shift; for (@_) { $m = $_ if $_ < $m } return $m; }',
  'sub enter { my $dir = shift; my @l = lstat($dir); @l && S_ISDIR($l[2]) or fail(2, "the folder is missing or not a folder"); chdir($dir) or fail(2, "cannot enter the folder: $!"); my @s = stat("."); ($s[0] == $l[0] && $s[1] == $l[1]) or fail(2, "the folder changed"); }',
  'sub plain { my $n = shift; (length($n) >= 1 && length($n) <= 255 && $n !~ m{[/\\0]} && $n ne "." && $n ne "..") or fail(8, "not a plain file name"); index($n, "' + UPLOAD_TEMPORARY_PREFIX + '") != 0 or fail(8, "a name kept for the service\'s temporary files"); }',
  'sub regular_files { opendir(my $dh, ".") or fail(2, "cannot list the folder: $!"); my @out; for my $n (readdir $dh) { next if $n eq "." || $n eq ".." || index($n, "' + UPLOAD_TEMPORARY_PREFIX + '") == 0; my @s = lstat($n); push @out, [$n, @s] if @s && S_ISREG($s[2]); } return @out; }',
  'sub hold { my $lk = shift; for (1 .. 1000) { return if flock($lk, LOCK_EX | LOCK_NB); select(undef, undef, undef, 0.01); } fail(1, "the uploads folder stays locked"); }',
  'sub stale { my $n = shift; sysopen(my $fh, $n, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) or return 0; return flock($fh, LOCK_EX | LOCK_NB) ? 1 : 0; }',
  'sub held { my %skip = map { $_ => 1 } @_; opendir(my $dh, ".") or fail(2, "cannot list the folder: $!"); my $sum = 0; for my $n (readdir $dh) { next if $n eq "." || $n eq ".." || $skip{$n}; my @s = lstat($n); next unless @s && S_ISREG($s[2]); if (index($n, "' + UPLOAD_TEMPORARY_PREFIX + '") == 0 && stale($n)) { unlink($n); next; } $sum += $s[7]; } return $sum; }',
  'my $op = shift @ARGV // "";',
  'if ($op eq "list") { for my $pair (@ARGV) { my ($kind, $dir) = split(/=/, $pair, 2); enter($dir); for my $f (regular_files()) { print join("\\t", $kind, unpack("H*", $f->[0]), $f->[8], $f->[10]), "\\n"; } } exit 0; }',
  'if ($op eq "read") { my ($dir, $n) = @ARGV; plain($n); enter($dir);',
  '  sysopen(my $fh, $n, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) or fail($!{ENOENT} ? 3 : 4, "cannot open it: $!");',
  '  my @s = stat($fh); S_ISREG($s[2]) or fail(4, "not a regular file");',
  '  syswrite(STDOUT, "$s[7]\\n") or exit 1;',
  '  while (1) { my $r = sysread($fh, my $buf, 262144); defined $r or fail(1, "read: $!"); last if $r == 0; my $o = 0; while ($o < $r) { my $w = syswrite(STDOUT, $buf, $r - $o, $o); defined $w or exit 1; $o += $w; } }',
  '  exit 0; }',
  'if ($op eq "write") { my ($dir, $n, $per_file, $per_session, $announced) = @ARGV; plain($n); enter($dir);',
  '  sysopen(my $lk, ".", O_RDONLY) or fail(2, "cannot open the folder: $!"); hold($lk);',
  '  my $fh; for (1 .. 100) { my $try = sprintf("%s%d-%08x", "' + UPLOAD_TEMPORARY_PREFIX + '", $$, int(rand(4294967296))); if (sysopen($fh, $try, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600)) { $tmp = $try; last; } $!{EEXIST} or fail(2, "cannot write: $!"); }',
  '  defined $tmp or fail(2, "cannot write: no free temporary name");',
  '  flock($fh, LOCK_EX | LOCK_NB) or fail(1, "cannot hold the temporary file: $!");',
  '  $announced <= $per_file or fail(5, "too large");',
  '  my $room = $per_session - held($tmp, $n);',
  '  ($room >= 0 && $announced <= $room) or fail(6, "the session\'s uploads are full");',
  '  my $reserved = $announced >= 0 ? $announced : least($per_file, $room, ' + RESERVE_STEP + ');',
  '  truncate($fh, $reserved) or fail(1, "cannot reserve: $!"); flock($lk, LOCK_UN);',
  '  my $total = 0;',
  '  while (1) { my $r = sysread(STDIN, my $buf, 262144); defined $r or fail(1, "read: $!"); last if $r == 0; $total += $r;',
  '    $total > $per_file and fail(5, "too large");',
  '    if ($total > $reserved) { hold($lk); $room = $per_session - held($tmp, $n); $total > $room and fail(6, "too large"); $reserved = least($per_file, $room, $total + ' + RESERVE_STEP + '); truncate($fh, $reserved) or fail(1, "cannot reserve: $!"); flock($lk, LOCK_UN); }',
  '    my $o = 0; while ($o < $r) { my $w = syswrite($fh, $buf, $r - $o, $o); defined $w or fail($!{ENOSPC} ? 7 : 1, "write: $!"); $o += $w; } }',
  // Under the folder's lock, so that no count takes the temporary for an abandoned one once it is closed.
  '  hold($lk); truncate($fh, $total) or fail(1, "write: $!");',
  '  close($fh) or fail($!{ENOSPC} ? 7 : 1, "write: $!");',
  '  rename($tmp, $n) or fail(1, "rename: $!"); $tmp = undef;',
  '  print "$total\\n"; exit 0; }',
  'if ($op eq "tidy") { enter($ARGV[0]); sysopen(my $lk, ".", O_RDONLY) or fail(2, "cannot open the folder: $!"); hold($lk); held(); exit 0; }',
  'fail(2, "unknown operation");',
].join('\n');

/** The program's exit, once its output has been read to the end too. */
async function outcome(helper: SupervisedProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const stdout = helper.child.stdout!;
  const drained = stdout.readableEnded || stdout.destroyed ? Promise.resolve() : new Promise<void>((resolve) => stdout.once('close', () => resolve()));
  const [exit] = await Promise.all([helper.exited, drained]);
  return exit;
}

/** Why a file could not be listed, read or written; `field` is what the caller's message names. */
export class FileRefusal extends Error {
  constructor(
    readonly reason: 'name' | 'missing' | 'not-regular' | 'downloading' | 'file-cap' | 'session-cap' | 'disk-full',
    message: string,
  ) {
    super(message);
  }
}

/** Caps on what uploads may write (bytes). */
export interface UploadCaps {
  maxFileBytes: number;
  maxSessionBytes: number;
}

/** The most the listing program may write: about 16,000 files of the longest names, far more of usual ones. */
const LIST_OUTPUT_BYTES = 8 * 1024 * 1024;

/** A session's downloads and uploads, through a program inside it. */
export class SessionFiles {
  constructor(private readonly sandbox: SessionSandbox) {}

  private folder(kind: FileKind): string {
    return `${this.sandbox.dir}/${FILE_FOLDERS[kind]}`;
  }

  private start(args: string[], stdin: 'ignore' | 'pipe'): SupervisedProcess {
    if (this.sandbox.ended()) throw new Error("the session's sandbox has ended");
    const helper = this.sandbox.spawn('files', PERL, ['-e', FILES_SCRIPT, '--', ...args], { env: this.sandbox.env, stdio: [stdin, 'pipe', 'pipe'], mayRun: [] });
    helper.child.once('error', () => undefined);
    return helper;
  }

  /** Every regular file of both folders; downloads still arriving are marked and named as they will be. */
  async list(kinds: readonly FileKind[] = ['download', 'upload']): Promise<SessionFileEntry[]> {
    if (kinds.length === 0) return [];
    const helper = this.start(['list', ...kinds.map((kind) => `${kind}=${this.folder(kind)}`)], 'ignore');
    // The session decides how many files there are: what the engine reads of the list is bounded.
    const chunks: Buffer[] = [];
    let bytes = 0;
    helper.child.stdout!.on('data', (chunk: Buffer) => {
      const before = bytes;
      bytes += chunk.length;
      if (bytes <= LIST_OUTPUT_BYTES) chunks.push(chunk);
      else if (before <= LIST_OUTPUT_BYTES) {
        // Past the cap, once: what was read is let go and the program ended.
        chunks.length = 0;
        signalProcess(helper, 'SIGKILL');
      }
    });
    const { code, signal } = await outcome(helper);
    if (bytes > LIST_OUTPUT_BYTES) throw new Error(`the session's folders hold too many files to list (their names pass ${LIST_OUTPUT_BYTES / 1024 / 1024} MiB)`);
    const out = Buffer.concat(chunks).toString('utf8');
    if (code !== 0) throw new Error(`listing the session's files failed: ${helper.stderrTail() || (signal ?? `exit ${code}`)}`);
    const found: SessionFileEntry[] = [];
    const lines = out.split('\n').map((line) => line.split('\t')).filter((fields): fields is [string, string, string, string] => fields.length === 4 && fields[0] !== '');
    const downloads = new Set(lines.filter(([kind]) => kind === 'download').map(([, hex]) => Buffer.from(hex, 'hex').toString('utf8')));
    for (const [kind, hex, size, mtime] of lines) {
      const name = Buffer.from(hex, 'hex').toString('utf8');
      const downloading = kind === 'download' && IN_PROGRESS.test(name);
      found.push({
        name: downloading ? arrivingName(name, downloads) : name,
        size: Number(size),
        kind: kind as FileKind,
        created: new Date(Number(mtime) * 1000).toISOString(),
        state: downloading ? 'downloading' : 'complete',
      });
    }
    // Firefox keeps an empty file under the final name while `.part` grows: one entry, downloading.
    const arriving = new Set(found.filter((f) => f.state === 'downloading').map((f) => f.name));
    return found
      .filter((f) => f.state === 'downloading' || f.kind !== 'download' || !arriving.has(f.name))
      .sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : a.name.localeCompare(b.name)));
  }

  /**
   * A file's bytes: its size, then a stream of exactly that many bytes (the program reads the file
   * it opened, so a file that grows meanwhile still sends `size`). Refused with FileRefusal.
   */
  async read(kind: FileKind, name: string): Promise<{ size: number; stream: Readable; cancel: () => void }> {
    const problem = fileNameProblem(name);
    if (problem) throw new FileRefusal('name', problem);
    if (kind === 'download') {
      const arriving = (await this.list(['download'])).find((f) => f.name === name && f.state === 'downloading');
      if (arriving) throw new FileRefusal('downloading', `name: "${name}" is still downloading (${arriving.size} bytes so far); fetch it once it is complete`);
    }
    const helper = this.start(['read', this.folder(kind), name], 'ignore');
    const stdout = helper.child.stdout!;
    const size = await new Promise<number>((resolve, reject) => {
      let head = Buffer.alloc(0);
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        stdout.off('data', onData);
        outcome();
      };
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const newline = head.indexOf(10);
        if (newline < 0) {
          if (head.length > 32) settle(() => reject(new Error('the files program answered nonsense')));
          return;
        }
        settle(() => {
          // The bytes after the size line are the file's first: back into the stream, paused until the caller reads.
          stdout.pause();
          const rest = head.subarray(newline + 1);
          if (rest.length > 0) stdout.unshift(rest);
          resolve(Number(head.subarray(0, newline).toString('ascii')));
        });
      };
      stdout.on('data', onData);
      const failure = (code: number | null) =>
        code === 8 ? new FileRefusal('name', `name: "${name}" is not a name a file may have here`)
        : code === 3 ? new FileRefusal('missing', `name: no ${kind} named "${name}" in this session`)
        : code === 4 ? new FileRefusal('not-regular', `name: "${name}" is not a plain file (a link, folder or device is never handed out)`)
        : new Error(`reading the session's file failed: ${helper.stderrTail() || `exit ${code}`}`);
      // No size line before the output ended: the program refused; its exit code says why.
      stdout.once('end', () => void helper.exited.then(({ code }) => settle(() => reject(failure(code)))));
      void helper.exited.then(({ code }) => {
        // A program that read the file exits 0; its bytes may still be on their way.
        if (code !== 0) settle(() => reject(failure(code)));
      });
    });
    return { size, stream: stdout, cancel: () => signalProcess(helper, 'SIGKILL') };
  }

  /** Removes the uploads' temporaries that no upload holds any more (their programs were killed). */
  private async tidy(): Promise<void> {
    const helper = this.start(['tidy', this.folder('upload')], 'ignore');
    const { code } = await outcome(helper);
    if (code !== 0) throw new Error(`tidying the session's uploads failed: ${helper.stderrTail() || `exit ${code}`}`);
  }

  /**
   * Writes `body` as the upload `name` (replacing one of that name), within the caps; resolves
   * with its size. `announced` is the body's length when the sender said it: reserved whole before
   * a byte is read, so that an upload that cannot fit beside those under way is refused at once.
   * Nothing stays behind when it is refused: the partial file is removed.
   */
  async write(name: string, body: Readable, caps: UploadCaps, announced: number | null = null): Promise<number> {
    const problem = fileNameProblem(name);
    if (problem) throw new FileRefusal('name', problem);
    const length = announced !== null && Number.isSafeInteger(announced) && announced >= 0 ? announced : -1;
    const helper = this.start(['write', this.folder('upload'), name, String(caps.maxFileBytes), String(caps.maxSessionBytes), String(length)], 'pipe');
    const stdin = helper.child.stdin!;
    stdin.on('error', () => undefined);
    let out = '';
    helper.child.stdout!.setEncoding('utf8');
    helper.child.stdout!.on('data', (chunk: string) => (out += chunk));
    let bodyFailed: Error | undefined;
    body.on('error', (error) => {
      bodyFailed = error;
      signalProcess(helper, 'SIGKILL');
    });
    // The body ends early (the caller went away): the program is ended, and its partial file with
    // it just after (tidy, below).
    body.once('close', () => {
      if (!body.readableEnded) signalProcess(helper, 'SIGKILL');
    });
    body.pipe(stdin);
    const { code, signal } = await outcome(helper);
    body.unpipe(stdin);
    if (code === 0) return Number(out.trim());
    // A killed program could not remove its temporary: it is no longer held, so a tidy removes it
    // now rather than leave its bytes on the session's disk until the next upload's count.
    if (signal) await this.tidy().catch(() => undefined);
    const mb = (bytes: number) => `${Math.floor(bytes / (1024 * 1024))} MB`;
    if (code === 5) throw new FileRefusal('file-cap', `body: a file may be at most ${mb(caps.maxFileBytes)} on this service`);
    if (code === 6) throw new FileRefusal('session-cap', `body: a session's uploads may add up to at most ${mb(caps.maxSessionBytes)}; this one does not fit beside those stored and under way`);
    if (code === 7) throw new FileRefusal('disk-full', "body: the session's disk is full");
    if (code === 8) throw new FileRefusal('name', `name: "${name}" is not a name a file may be given here`);
    if (bodyFailed || signal) throw new Error(`the upload was cut off: ${bodyFailed?.message ?? 'the sender went away'}`);
    throw new Error(`writing the session's file failed: ${helper.stderrTail() || `exit ${code}`}`);
  }
}
