// The driving of the sessions this node runs (one `Driving` per session, driving.ts), shared by
// the channels that need it: `people` (viewers' presence and requests), RFB (whose input passes
// only the driver's in `one` mode) and automation (a program drives). A session's driving is made
// with its first member in the mode its row says, and goes with its last; each change is written
// to the row and told to every node (presence's announcement), so the share state on any node
// says who drives. Also the viewer passes: what the owner's handle names a viewer with.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isControlMode, VIEWER_NAME_MAX, type ControlAction, type ControlAnswer, type ControlMode, type Driver } from '../../../protocol/index.js';
import { Driving, DEFAULT_CONTROL_IDLE_MS } from './driving.js';

export interface NodeDrivingOptions {
  /** The mode a session's row says (`control_mode`); `shared` for a session that is not there. */
  modeOf(sessionId: string): Promise<ControlMode>;
  /** Writes the mode and driver into the session's row and tells every node's followers. */
  publish(sessionId: string, mode: ControlMode, driver: Driver | null): Promise<void>;
  idleMs?: number;
  now?: () => number;
}

export interface HeldDriving {
  driving: Driving;
  /** This user of the session's driving is done (it goes with its last). */
  release(): void;
}

/** Each running session's driving on this node, by session id. */
export class NodeDriving {
  private readonly sessions = new Map<string, { driving: Promise<Driving>; users: number }>();

  constructor(private readonly options: NodeDrivingOptions) {}

  /** The session's driving, made on first use; `release()` when done with it. */
  async hold(sessionId: string): Promise<HeldDriving> {
    let entry = this.sessions.get(sessionId);
    if (!entry) {
      const made = this.options.modeOf(sessionId).then((mode) => new Driving(mode, {
        mode,
        idleMs: this.options.idleMs ?? DEFAULT_CONTROL_IDLE_MS,
        ...(this.options.now ? { now: this.options.now } : {}),
        publish: (to, driver) => void this.options.publish(sessionId, to, driver).catch(() => undefined),
      }));
      entry = { driving: made, users: 0 };
      this.sessions.set(sessionId, entry);
    }
    entry.users += 1;
    const held = entry;
    const driving = await held.driving;
    let released = false;
    return {
      driving,
      release: () => {
        if (released) return;
        released = true;
        held.users -= 1;
        if (held.users === 0 && this.sessions.get(sessionId) === held) {
          this.sessions.delete(sessionId);
          driving.close();
          // Nobody is left to drive: the share state says so.
          void this.options.publish(sessionId, driving.answer().mode, null).catch(() => undefined);
        }
      },
    };
  }

  /**
   * What the owner does (`POST /v8/vm/control`) to a session this node runs. With nobody attached
   * there is nobody to give to; the mode is written to the row either way.
   */
  async act(sessionId: string, action: ControlAction): Promise<ControlAnswer | { status: 'denied'; message: string }> {
    const driving = await this.existing(sessionId);
    if (!driving) {
      if (action.action === 'give') return { status: 'denied', message: 'to: nobody with that id is in the session now' };
      const mode = action.action === 'mode' ? action.mode : await this.options.modeOf(sessionId);
      if (action.action === 'mode') await this.options.publish(sessionId, mode, null);
      return { status: 'ok', mode, driver: null, people: [] };
    }
    const done = driving.owner(action);
    return 'refused' in done ? { status: 'denied', message: done.refused } : done;
  }

  /** The session's driving if anyone is attached here now. */
  async existing(sessionId: string): Promise<Driving | undefined> {
    return this.sessions.get(sessionId)?.driving;
  }

  close(): void {
    for (const entry of this.sessions.values()) void entry.driving.then((driving) => driving.close());
    this.sessions.clear();
  }
}

/** What a viewer pass says: the name the customer's app gave, and that it came through the owner's handle. */
export interface ViewerPass {
  name?: string;
  owner: true;
}

const PASS_LABEL = 'remote-browser-kit viewer pass';

/**
 * Viewer passes: `<payload>.<HMAC>`, the payload base64url JSON `{n, e}` (name, expiry ms), the
 * HMAC over the session id and the payload under the engine's secret. The session id stays out of
 * the pass; a pass made for one session opens in no other, so no name reaches another account's session.
 */
export function viewerPasses(secret: string, now: () => number = Date.now) {
  const mac = (sessionId: string, payload: string) => createHmac('sha256', secret).update(`${PASS_LABEL}\n${sessionId}\n${payload}`).digest();
  return {
    make(sessionId: string, name: string | undefined, ttlMs = 24 * 3600_000): { pass: string; expires: number } {
      const expires = now() + ttlMs;
      const payload = Buffer.from(JSON.stringify({ ...(name ? { n: name } : {}), e: expires })).toString('base64url');
      return { pass: `${payload}.${mac(sessionId, payload).toString('base64url')}`, expires };
    },
    open(sessionId: string, pass: string): ViewerPass | null {
      const [payload, tag, extra] = pass.split('.');
      if (!payload || !tag || extra !== undefined) return null;
      const expected = mac(sessionId, payload);
      const given = Buffer.from(tag, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      try {
        const value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { n?: unknown; e?: unknown };
        if (typeof value.e !== 'number' || value.e < now()) return null;
        const name = typeof value.n === 'string' ? value.n.slice(0, VIEWER_NAME_MAX) : undefined;
        return { ...(name ? { name } : {}), owner: true };
      } catch {
        return null;
      }
    },
  };
}

export type ViewerPasses = ReturnType<typeof viewerPasses>;

/** The mode a row says, `shared` for anything else. */
export function modeOfRow(row: { control_mode?: string | undefined } | undefined): ControlMode {
  return isControlMode(row?.control_mode) ? row.control_mode : 'shared';
}
