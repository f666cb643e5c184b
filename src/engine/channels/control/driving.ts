// Who drives one session (its driving), decided in one place: the node that runs it (decisions.md
// 100). Each viewer's `people` WebSocket and each program (DevTools or BiDi) is a member, known by
// its viewer key; in `one` mode only the driver's keys, presses, clipboard and size reach the
// display (the RFB room asks `admits`), others ask, the driver (or the owner) gives, an idle
// driver's control passes to whoever waits, the owner and the account's programs take it at any time. Every change is told to every member and
// published (the store's row, so the share state on any node says who drives).
import { randomBytes } from 'node:crypto';
import type { ControlAction, ControlAnswer, ControlMode, ControlPicture, Driver, Person } from '../../../protocol/index.js';

/** A driver that gives no input this long loses control to the first who asks (config `control.idleSeconds`). */
export const DEFAULT_CONTROL_IDLE_MS = 30_000;
/** The driver's pointer is told to the others at most this often. */
export const POINTER_INTERVAL_MS = 100;
/** Who the owner is when they took control with no viewer of theirs attached: nobody types until they give it. */
export const OWNER_HOLDS: Driver = { id: 'owner', kind: 'person', owner: true };

export interface DrivingOptions {
  mode: ControlMode;
  idleMs?: number;
  now?: () => number;
  /** The driver changed (or the mode): the store's row and every node's share state follow. */
  publish(mode: ControlMode, driver: Driver | null): void;
}

/** What joins: a viewer (its link's rights) or a program of the session's account. */
export interface Joining {
  kind: 'person' | 'program';
  rights: 'control' | 'view';
}

export interface ControlMember {
  readonly id: string;
  /**
   * Its hello: the viewer key its RFB connection carries (`?viewer=`, the viewer's own, so input
   * counts as its own across reconnects), and what a pass from the owner's handle says of it.
   */
  hello(viewerKey: string | undefined, pass: { name?: string; owner: boolean } | null): void;
  ask(): string | null;
  cancel(): void;
  give(to: string): string | null;
  release(): string | null;
  take(): string | null;
  /** Whether it drives now (a program's input is refused while it does not, in `one` mode). */
  drives(): boolean;
  leave(): void;
}

interface Member extends Person {
  /** Its viewer key (one the engine made until the viewer's hello gives its own). */
  viewerKey: string;
  rights: 'control' | 'view';
  askedAt: number | null;
  tell: (picture: ControlPicture) => void;
  pointer?: (x: number, y: number) => void;
}

const id = (bytes: number) => randomBytes(bytes).toString('base64url');

/** One session's driving: its mode, its members, the driver, who asks. */
export class Driving {
  private readonly members = new Map<string, Member>();
  private readonly byViewerKey = new Map<string, Member>();
  private driver: Driver | null = null;
  private lastInputAt = 0;
  private guests = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private pointerAt = 0;
  private pointerTimer: NodeJS.Timeout | undefined;
  private pendingPointer: { x: number; y: number } | null = null;
  /** The RFB connections' watchers: each lets go of its viewer's keys and buttons when it no longer drives. */
  private readonly driverWatchers = new Set<() => void>();
  private readonly now: () => number;
  readonly idleMs: number;

  constructor(private mode: ControlMode, private readonly options: DrivingOptions) {
    this.now = options.now ?? Date.now;
    this.idleMs = options.idleMs ?? DEFAULT_CONTROL_IDLE_MS;
  }

  get size(): number {
    return this.members.size;
  }

  /** A member joins; `tell` hears the whole picture after each change, `pointer` the driver's pointer. */
  join(joining: Joining, tell: (picture: ControlPicture) => void, pointer?: (x: number, y: number) => void): ControlMember {
    const member: Member = {
      id: id(6),
      viewerKey: id(16),
      kind: joining.kind,
      rights: joining.rights,
      askedAt: null,
      tell,
      ...(pointer ? { pointer } : {}),
      ...(joining.kind === 'program' ? { owner: true as const } : { guest: ++this.guests }),
      ...(joining.rights === 'view' ? { watching: true as const } : {}),
    };
    this.members.set(member.id, member);
    this.byViewerKey.set(member.viewerKey, member);
    // A program of the account drives when it comes: it is the owner's, like a take.
    if (this.mode === 'one' && member.kind === 'program') this.setDriver(member);
    else this.changed();
    const may = (act: () => string | null): string | null => (this.members.has(member.id) ? act() : 'you have left this session');
    return {
      id: member.id,
      hello: (viewerKey, pass) => {
        if (viewerKey !== undefined && viewerKey !== member.viewerKey) {
          if (this.byViewerKey.get(member.viewerKey) === member) this.byViewerKey.delete(member.viewerKey);
          member.viewerKey = viewerKey;
          // The same page again (its earlier socket not yet closed): the newest holds the key.
          this.byViewerKey.set(viewerKey, member);
        }
        if (pass?.name) {
          member.name = pass.name;
          delete member.guest;
        }
        if (pass?.owner && member.kind === 'person') member.owner = true;
        // The owner took control before their viewer came: it drives now.
        if (member.owner && member.rights === 'control' && this.driver?.id === OWNER_HOLDS.id) this.setDriver(member);
        else if (this.driver?.id === member.id) this.setDriver(member);
        else this.changed();
      },
      ask: () => may(() => this.ask(member)),
      cancel: () => {
        member.askedAt = null;
        this.changed();
      },
      give: (to) => may(() => (this.driver?.id === member.id || member.owner ? this.give(to) : 'only the driver or the owner gives control')),
      release: () => may(() => (this.driver?.id === member.id ? this.release() : 'you do not drive')),
      take: () => may(() => (member.owner ? (this.setDriver(member), null) : 'only the session\'s owner takes control; ask for it instead')),
      drives: () => this.mode !== 'one' || this.driver?.id === member.id,
      leave: () => this.leave(member),
    };
  }

  /**
   * Whether an input message of the RFB connection with `viewerKey` reaches the display. In `shared`
   * mode every one does; in `one` mode the driver's, and, while nobody drives, a key or a press
   * of a share-link viewer makes it the driver.
   */
  admits(viewerKey: string | undefined, presses: boolean): boolean {
    if (this.mode !== 'one') return true;
    const member = viewerKey === undefined ? undefined : this.byViewerKey.get(viewerKey);
    if (!member || member.rights !== 'control') return false;
    if (this.driver === null && presses) this.setDriver(member);
    if (this.driver?.id !== member.id) return false;
    this.lastInputAt = this.now();
    return true;
  }

  /** Whether the RFB connection with `viewerKey` drives now (every one does in `shared` mode). */
  drives(viewerKey: string | undefined): boolean {
    if (this.mode !== 'one') return true;
    const member = viewerKey === undefined ? undefined : this.byViewerKey.get(viewerKey);
    return member !== undefined && this.driver?.id === member.id;
  }

  /** Calls `changed` after each change of driver or mode (the RFB room lets go of what a former driver held), until the returned function is called. */
  watchDriver(changed: () => void): () => void {
    this.driverWatchers.add(changed);
    return () => void this.driverWatchers.delete(changed);
  }

  /** The driver's pointer moved: the others see where, at most every POINTER_INTERVAL_MS. */
  pointerMoved(viewerKey: string | undefined, x: number, y: number): void {
    if (this.mode !== 'one' || viewerKey === undefined || this.byViewerKey.get(viewerKey)?.id !== this.driver?.id) return;
    this.pendingPointer = { x, y };
    if (this.pointerTimer) return;
    const wait = this.pointerAt + POINTER_INTERVAL_MS - this.now();
    const send = () => {
      this.pointerTimer = undefined;
      const at = this.pendingPointer;
      this.pendingPointer = null;
      if (!at) return;
      this.pointerAt = this.now();
      for (const member of this.members.values()) if (member.id !== this.driver?.id) member.pointer?.(at.x, at.y);
    };
    if (wait <= 0) send();
    else this.pointerTimer = setTimeout(send, wait);
  }

  /** What the owner does through the API (`POST /v8/vm/control`): an answer, or why not. */
  owner(action: ControlAction): ControlAnswer | { refused: string } {
    let refused: string | null = null;
    switch (action.action) {
      case 'take': {
        // The owner's own viewer drives when one is here; otherwise the owner holds control.
        const own = [...this.members.values()].find((member) => member.owner && member.kind === 'person' && member.rights === 'control');
        this.setDriver(own ?? OWNER_HOLDS);
        break;
      }
      case 'give':
        refused = this.give(action.to);
        break;
      case 'release':
        refused = this.release();
        break;
      case 'mode':
        this.setMode(action.mode);
        break;
    }
    return refused ? { refused } : this.answer();
  }

  setMode(mode: ControlMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    this.driver = null;
    for (const member of this.members.values()) member.askedAt = null;
    // A program of the account drives as the mode turns to one driver (as when it comes).
    const program = mode === 'one' ? [...this.members.values()].find((member) => member.kind === 'program') : undefined;
    if (program) this.setDriver(program);
    else {
      this.published();
      this.driverChanged();
    }
  }

  answer(): ControlAnswer {
    return { status: 'ok', mode: this.mode, driver: this.mode === 'one' ? this.driver : null, people: this.people() };
  }

  close(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.pointerTimer);
    this.members.clear();
    this.byViewerKey.clear();
    this.driverWatchers.clear();
  }

  private ask(member: Member): string | null {
    if (this.mode !== 'one') return 'everyone controls this session; there is nothing to ask for';
    if (member.rights !== 'control') return 'a view-only link watches; it cannot ask for control';
    if (this.driver?.id === member.id) return null;
    if (this.driver === null) return this.setDriver(member), null;
    member.askedAt ??= this.now();
    this.checkIdle();
    this.changed();
    return null;
  }

  private give(to: string): string | null {
    if (this.mode !== 'one') return 'everyone controls this session; switch it to one driver first';
    const member = this.members.get(to);
    if (!member) return 'to: nobody with that id is in the session now';
    if (member.rights !== 'control') return 'to: a view-only link watches; it cannot drive';
    this.setDriver(member);
    return null;
  }

  /** The driver lets go: the first who asked drives, or nobody. */
  private release(): string | null {
    if (this.mode !== 'one') return 'everyone controls this session; there is nothing to release';
    this.setDriver(this.firstAsking() ?? null);
    return null;
  }

  private leave(member: Member): void {
    if (!this.members.delete(member.id)) return;
    if (this.byViewerKey.get(member.viewerKey) === member) this.byViewerKey.delete(member.viewerKey);
    if (this.driver?.id === member.id) this.setDriver(this.firstAsking() ?? null);
    else this.changed();
  }

  private firstAsking(): Member | undefined {
    let first: Member | undefined;
    for (const member of this.members.values()) if (member.askedAt !== null && (!first || member.askedAt < first.askedAt!)) first = member;
    return first;
  }

  private setDriver(next: Member | Driver | null): void {
    const driver: Driver | null = next === null ? null : driverOf(next);
    if (next && 'askedAt' in next) next.askedAt = null;
    const same = JSON.stringify(this.driver) === JSON.stringify(driver);
    this.driver = driver;
    this.lastInputAt = this.now();
    this.checkIdle();
    if (same) this.changed();
    else {
      this.published();
      this.driverChanged();
    }
  }

  private driverChanged(): void {
    for (const changed of [...this.driverWatchers]) changed();
  }

  /** A waiting request passes control on once the driver has been idle `idleMs`; programs and the owner's hold are never idle. */
  private checkIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const waiting = this.firstAsking();
    const driver = this.driver === null ? undefined : this.members.get(this.driver.id);
    if (this.mode !== 'one' || !waiting || !driver || driver.kind === 'program') return;
    const wait = this.lastInputAt + this.idleMs - this.now();
    if (wait <= 0) return this.setDriver(waiting);
    this.idleTimer = setTimeout(() => this.checkIdle(), wait);
    this.idleTimer.unref();
  }

  private published(): void {
    this.options.publish(this.mode, this.mode === 'one' ? this.driver : null);
    this.changed();
  }

  private people(): Person[] {
    return [...this.members.values()].map((member) => ({
      id: member.id,
      kind: member.kind,
      ...(member.name ? { name: member.name } : {}),
      ...(member.guest !== undefined ? { guest: member.guest } : {}),
      ...(member.owner ? { owner: true as const } : {}),
      ...(member.watching ? { watching: true as const } : {}),
      ...(member.askedAt !== null ? { asks: true as const } : {}),
    }));
  }

  private changed(): void {
    const people = this.people();
    const driver = this.mode === 'one' ? this.driver : null;
    for (const member of this.members.values()) {
      // `seat`: the viewer key's former name, sent for one version (decisions.md 149).
      member.tell({ type: 'control', mode: this.mode, you: member.id, viewerKey: member.viewerKey, seat: member.viewerKey, people, driver, ...(this.mode === 'one' ? { idleMs: this.idleMs } : {}) });
    }
  }
}

function driverOf(member: Member | Driver): Driver {
  return {
    id: member.id,
    kind: member.kind,
    ...(member.name ? { name: member.name } : {}),
    ...(member.guest !== undefined ? { guest: member.guest } : {}),
    ...(member.owner ? { owner: true as const } : {}),
  };
}
