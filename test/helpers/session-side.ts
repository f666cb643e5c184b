// Writing into the engine's connections from a session's side (issue 53): what a process with the
// session's uid can do to the browser's end of any of them. Every connection the engine holds into
// a session runs through one relay process there (confinement.ts `connect`) that carries the
// browser's bytes to the engine unread, so root writing into a relay's output (fd 1, copied with
// pidfd_getfd) puts the same bytes at the same place. Used by the mirror fuzz and the blast-radius bench.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';

/** Copies fd `fd` of process `pid` with pidfd_getfd (as root may) and writes the bytes of stdin into it. */
const WRITER = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid, target = int(sys.argv[1]), int(sys.argv[2])
pidfd = os.pidfd_open(pid)
fd = libc.syscall(438, pidfd, target, 0)
if fd < 0:
    sys.exit('pidfd_getfd: errno %d' % ctypes.get_errno())
data = sys.stdin.buffer.read()
try:
    os.write(fd, data)
except OSError as error:
    sys.exit('write: %s' % error)
`;

/** Writes `bytes` into fd 1 of the relay `pid`: toward the engine, as the session's end would. Resolves whether or not the relay took them (it may be gone). */
export async function writeFromSession(pid: number, bytes: Buffer): Promise<void> {
  await new Promise<void>((resolve) => {
    const child = execFile('python3', ['-c', WRITER, String(pid), '1'], { timeout: 10_000, maxBuffer: 1024 * 1024 }, () => resolve());
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(bytes);
  });
}

/** A WebSocket frame as a server writes it (unmasked), with the length it announces. */
export function serverFrame(opcode: number, payload: Buffer, fin = true): Buffer {
  const first = (fin ? 0x80 : 0) | opcode;
  if (payload.length < 126) return Buffer.concat([Buffer.from([first, payload.length]), payload]);
  if (payload.length < 65536) {
    const header = Buffer.alloc(4);
    header[0] = first;
    header[1] = 126;
    header.writeUInt16BE(payload.length, 2);
    return Buffer.concat([header, payload]);
  }
  const header = Buffer.alloc(10);
  header[0] = first;
  header[1] = 127;
  header.writeBigUInt64BE(BigInt(payload.length), 2);
  return Buffer.concat([header, payload]);
}

/** A text frame from the browser's side. */
export const textFrame = (value: string): Buffer => serverFrame(1, Buffer.from(value, 'utf8'));

interface HostProcess {
  pid: number;
  ppid: number;
  uid: number;
  comm: string;
}

async function hostProcesses(): Promise<HostProcess[]> {
  const found: HostProcess[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    if (!status) continue;
    found.push({
      pid: Number(entry),
      ppid: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]),
      uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]),
      comm: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '',
    });
  }
  return found;
}

/** The relays the engine process `enginePid` runs into sessions, with the uid of the session each is in. */
export async function relaysOfEngine(enginePid: number): Promise<Array<{ pid: number; uid: number }>> {
  return (await hostProcesses()).filter((p) => p.ppid === enginePid && p.comm === 'socat' && p.uid !== 0).map(({ pid, uid }) => ({ pid, uid }));
}

/** The uid of a session that started after `before` was read (the uids of the relays then): the first new one to appear. */
export async function uidOfNewSession(enginePid: number, before: Set<number>, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const fresh = (await relaysOfEngine(enginePid)).find((relay) => !before.has(relay.uid));
    if (fresh) return fresh.uid;
    if (Date.now() > deadline) throw new Error('no relay of the new session appeared');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
