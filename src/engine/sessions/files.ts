// The use cases of files in and out of a session (issue 23, decisions.md 55-57), the same for a
// program (the API, by key) and a person (the share link): whether the service and the session's
// plan let files move, which node holds them (here: the program inside the session,
// runtime/session/session-files.ts; another node of a cluster: cluster/files-link.ts), and the caps.
// Outcomes, not HTTP: each edge words and sends them.
import type { Readable } from 'node:stream';
import { fileNameProblem, type FileKind, type FilesChannelMessage, type SessionFileEntry } from '../../protocol/files.js';
import { sessionOwner } from '../store/owner.js';
import { FileRefusal, type UploadCaps } from '../runtime/index.js';
import type { SessionRow } from '../store/store.js';
import type { SessionService } from './service.js';

/** A session's files wherever they are: the program inside it here, or the node that runs it. */
export interface FilesAt {
  list(kinds?: readonly FileKind[]): Promise<SessionFileEntry[]>;
  read(kind: FileKind, name: string): Promise<{ size: number; stream: Readable; cancel: () => void }>;
  /** `announced`: the body's length when its sender said it (reserved whole before a byte is read). */
  write(name: string, body: Readable, caps: UploadCaps, announced?: number | null): Promise<number>;
}

export interface FilesSettings {
  downloads: boolean;
  uploads: boolean;
  maxFileMb: number;
  maxSessionMb: number;
  bytesPerSecond: number | null;
}

/** A refusal as the edges word it: `upgrade` when the plan leaves it out, `denied` otherwise (the message names the field). */
export type FilesRefusal = { status: 'denied' | 'upgrade'; message: string };

export interface FileSwitches {
  downloads: boolean;
  uploads: boolean;
  maxFileBytes: number;
  maxSessionBytes: number;
}

export interface SessionFilesOptions {
  sessions: SessionService;
  /** A session's row as the store has it now. */
  row(sessionId: string): Promise<SessionRow | undefined>;
  settings: FilesSettings;
  /** The files of a session another node runs (cluster/files-link.ts); absent on one machine. */
  remote?: (nodeId: string, sessionId: string) => FilesAt;
}

const MB = 1024 * 1024;

export class SessionFilesService {
  readonly caps: UploadCaps;

  constructor(private readonly options: SessionFilesOptions) {
    this.caps = { maxFileBytes: options.settings.maxFileMb * MB, maxSessionBytes: options.settings.maxSessionMb * MB };
  }

  /** What may move for this session: the service's switches and its plan's. */
  async switches(row: SessionRow): Promise<FileSwitches> {
    const plan = await this.options.sessions.planOf(row);
    const { settings } = this.options;
    return { downloads: settings.downloads && plan?.downloads !== false, uploads: settings.uploads && plan?.uploads !== false, ...this.caps };
  }

  /**
   * What the files channel sends a controlling viewer of a session running here: its list
   * (downloads only when they may move) and the switches; null when it does not run here.
   */
  async snapshot(sessionId: string): Promise<FilesChannelMessage | null> {
    const here = this.here(sessionId);
    const row = here ? await this.options.row(sessionId) : undefined;
    if (!row || !here) return null;
    const switches = await this.switches(row);
    return { type: 'files', files: await here.list(switches.downloads ? ['download', 'upload'] : ['upload']), ...switches };
  }

  /**
   * The files of a session this node runs (or undefined): each call wakes it from standby first and
   * keeps it awake until done, a read until its stream closes (decisions.md 141).
   */
  here(sessionId: string): FilesAt | undefined {
    const files = this.options.sessions.endsOf(sessionId)?.files;
    if (!files) return undefined;
    const hold = () => this.options.sessions.hold(sessionId);
    return {
      list: (kinds) => awake(hold, () => files.list(kinds)),
      write: (name, body, caps, announced) => awake(hold, () => files.write(name, body, caps, announced)),
      read: async (kind, name) => {
        const release = await hold();
        try {
          const answer = await files.read(kind, name);
          answer.stream.once('close', release);
          return answer;
        } catch (error) {
          release();
          throw error;
        }
      },
    };
  }

  /** Where the session's files are, or why they cannot be reached (a session that is not running has none: they went with it). */
  private where(row: SessionRow): FilesAt | FilesRefusal {
    if (row.status !== 'running') {
      const now = row.status === 'starting' ? 'is still starting; its files can be reached once it runs' : `is ${row.status}; a session's files go away with it`;
      return { status: 'denied', message: `id: the session ${now}` };
    }
    const owner = sessionOwner(row, this.options.sessions.nodeId);
    if (owner.at === 'node') {
      if (!this.options.remote) return { status: 'denied', message: 'id: the node that runs this session is not reachable from here' };
      return this.options.remote(owner.nodeId, row.id);
    }
    const here = this.here(row.id) ?? (row.hibernated ? this.afterResume(row.id) : undefined);
    return here ?? { status: 'denied', message: 'id: the session is not running on this service any more' };
  }

  /** The files of a hibernated session (in its saved state, back in its folders once resumed), each call resuming it here first (decisions.md 166, 177). */
  private afterResume(sessionId: string): FilesAt {
    const resumed = async () => {
      await this.options.sessions.wake(sessionId);
      const here = this.here(sessionId);
      if (!here) throw new Error('the session is not running on this service any more');
      return here;
    };
    return {
      list: async (kinds) => (await resumed()).list(kinds),
      read: async (kind, name) => (await resumed()).read(kind, name),
      write: async (name, body, caps, announced) => (await resumed()).write(name, body, caps, announced),
    };
  }

  /** Why the service or the plan keeps this direction closed, or null. */
  private async closed(row: SessionRow, direction: 'downloads' | 'uploads'): Promise<FilesRefusal | null> {
    if (!this.options.settings[direction]) return { status: 'denied', message: `${direction === 'downloads' ? 'downloads are' : 'uploads are'} switched off on this service` };
    const plan = await this.options.sessions.planOf(row);
    if (plan?.[direction] === false) return { status: 'upgrade', message: `your plan does not include ${direction === 'downloads' ? 'fetching files a session downloaded' : 'giving files to sessions'}` };
    return null;
  }

  /** The session's files: what it downloaded (when downloads may move) and what it was given. */
  async list(row: SessionRow): Promise<{ status: 'ok'; files: SessionFileEntry[] } | FilesRefusal> {
    const at = this.where(row);
    if ('status' in at) return at;
    const switches = await this.switches(row);
    const kinds: FileKind[] = [...(switches.downloads ? (['download'] as const) : []), 'upload'];
    return { status: 'ok', files: await at.list(kinds) };
  }

  /** A file's bytes (a download, or an upload given earlier), streamed; or why not. */
  async read(row: SessionRow, name: string | null, kind: FileKind | null = null): Promise<{ status: 'ok'; name: string; size: number; stream: Readable; cancel: () => void } | FilesRefusal> {
    const problem = fileNameProblem(name);
    if (problem) return { status: 'denied', message: problem };
    const at = this.where(row);
    if ('status' in at) return at;
    const closed = await this.closed(row, 'downloads');
    // An upload may always be read back; a download only where downloads may move.
    const kinds: FileKind[] = kind ? [kind] : closed ? ['upload'] : ['download', 'upload'];
    if (kind === 'download' && closed) return closed;
    let missing: FileRefusal | undefined;
    for (const each of kinds) {
      try {
        return { status: 'ok', name: name!, ...(await at.read(each, name!)) };
      } catch (error) {
        if (!(error instanceof FileRefusal)) throw error;
        if (error.reason !== 'missing') return { status: 'denied', message: error.message };
        missing = error;
      }
    }
    // Not among the uploads where downloads may not move: the plan or the service is the answer, whatever the folder holds.
    if (closed) return closed;
    return { status: 'denied', message: missing?.message.replace(/no (download|upload) named/, 'no file named') ?? `name: no file named "${name}"` };
  }

  /**
   * Writes a file into the session's uploads folder. `declared` is the body's announced length
   * (refused at once when over a cap, before a byte is read); the caps hold while it streams too.
   */
  async write(row: SessionRow, name: string | null, body: Readable, declared: number | null): Promise<{ status: 'ok'; name: string; size: number } | FilesRefusal> {
    const problem = fileNameProblem(name);
    if (problem) return { status: 'denied', message: problem };
    const at = this.where(row);
    if ('status' in at) return at;
    const closed = await this.closed(row, 'uploads');
    if (closed) return closed;
    if (declared !== null && declared > this.caps.maxFileBytes) {
      return { status: 'denied', message: `body: a file may be at most ${this.options.settings.maxFileMb} MB on this service (this one is ${Math.ceil(declared / MB)} MB)` };
    }
    try {
      return { status: 'ok', name: name!, size: await at.write(name!, body, this.caps, declared) };
    } catch (error) {
      if (error instanceof FileRefusal) return { status: 'denied', message: error.message };
      throw error;
    }
  }
}

/** Runs `work` with the session held awake. */
async function awake<T>(hold: () => Promise<() => void>, work: () => Promise<T>): Promise<T> {
  const release = await hold();
  try {
    return await work();
  } finally {
    release();
  }
}
