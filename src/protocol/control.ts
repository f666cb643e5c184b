// Who drives a session and who watches it (issue 36): the control modes a session is created in,
// the messages of the share API's `people` WebSocket (the engine tells each viewer the people
// and the driver; a viewer asks, gives, releases, takes), and the owner's `POST /v8/vm/control`.
// The engine, the proxy route and the components read and write these the same way.

/** `shared`: everyone with the share link controls at once (as before); `one`: one driver at a time. */
export const CONTROL_MODES = ['shared', 'one'] as const;
export type ControlMode = (typeof CONTROL_MODES)[number];

export function isControlMode(value: unknown): value is ControlMode {
  return (CONTROL_MODES as readonly unknown[]).includes(value);
}

/**
 * Someone attached to a session, as the viewers see them. `name` is the one the customer's app
 * gave (through the proxy route, sealed to the session); without one the viewer shows "Guest
 * <guest>" in its own language.
 */
export interface Person {
  /** Public id for this attachment (not a credential): what `give` names. */
  id: string;
  kind: 'person' | 'program';
  name?: string;
  guest?: number;
  /** The session's owner (a pass made through the owner's handle) or a program of its account. */
  owner?: true;
  /** Watching through a view-only link: never drives. */
  watching?: true;
  /** Asked for control and waits. */
  asks?: true;
}

/** Who drives in `one` mode; `{ kind: "owner" }` alone: the owner took control and no viewer of theirs is here. */
export type Driver = Pick<Person, 'id' | 'kind' | 'name' | 'guest' | 'owner'>;

/** Engine -> viewer: the whole picture, after each change (small: a few people). */
export interface ControlPicture {
  type: 'control';
  mode: ControlMode;
  /** This viewer's own id in `people`. */
  you: string;
  /** The viewer key: what this viewer's RFB connection passes as `?viewer=`, so its keys count as its own. */
  viewerKey: string;
  /** @deprecated The same viewer key under its former name, sent for one version (decisions.md 149); read `viewerKey`. */
  seat?: string;
  people: Person[];
  /** `one` mode: who drives now (null: nobody; the first to ask or press takes it). */
  driver: Driver | null;
  /** `one` mode: how long the driver may give no input before a waiting request passes control on. */
  idleMs?: number;
}

/** Engine -> viewer, `one` mode: where the driver's pointer is on the display (display pixels), at most ten a second. */
export interface DriverPointer {
  type: 'pointer';
  x: number;
  y: number;
}

export type ControlServerMessage = ControlPicture | DriverPointer | { type: 'refused'; message: string };

/**
 * Viewer -> engine. `hello` first: `viewerKey`, a secret the viewer makes once per page (128
 * random bits, base64url) and also passes to its RFB connection as `?viewer=`, so its keys count
 * as its own across reconnects of either; `pass`, from the owner's handle (the proxy route), names
 * it. The key's former name `seat` is still read for one version (decisions.md 149).
 */
export type ControlClientMessage =
  | { type: 'hello'; viewerKey?: string; pass?: string }
  | { type: 'ask' }
  | { type: 'cancel' }
  | { type: 'give'; to: string }
  | { type: 'release' }
  | { type: 'take' };

const CLIENT_TYPES = new Set(['hello', 'ask', 'cancel', 'give', 'release', 'take']);

/** Reads a viewer's control message; null for anything else. */
export function parseControlClientMessage(text: string): ControlClientMessage | null {
  if (text.length > 2048) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const message = value as { type?: unknown; to?: unknown; pass?: unknown } | null;
  if (typeof message !== 'object' || message === null || typeof message.type !== 'string' || !CLIENT_TYPES.has(message.type)) return null;
  if (message.type === 'give') return typeof message.to === 'string' && message.to.length <= 64 ? { type: 'give', to: message.to } : null;
  if (message.type === 'hello') {
    const hello = message as { viewerKey?: unknown; seat?: unknown };
    // `seat`: the viewer key's former name, read for one version when `viewerKey` is absent (decisions.md 149).
    const viewerKey = hello.viewerKey !== undefined ? hello.viewerKey : hello.seat;
    if (viewerKey !== undefined && !isViewerKey(viewerKey)) return null;
    if (message.pass !== undefined && (typeof message.pass !== 'string' || message.pass.length > 1024)) return null;
    return { type: 'hello', ...(typeof viewerKey === 'string' ? { viewerKey } : {}), ...(typeof message.pass === 'string' ? { pass: message.pass } : {}) };
  }
  return { type: message.type } as ControlClientMessage;
}

/** `POST /v8/vm/control`: what the session's owner (its account's API key) does. */
export type ControlAction =
  | { action: 'take' }
  | { action: 'give'; to: string }
  | { action: 'release' }
  | { action: 'mode'; mode: ControlMode };

/** The answer of `POST /v8/vm/control` and of the proxy route's control endpoint. */
export interface ControlAnswer {
  status: 'ok';
  mode: ControlMode;
  driver: Driver | null;
  people: Person[];
}

/** Reads the owner's control request body (without `id`); a message naming the field otherwise. */
export function parseControlAction(body: Record<string, unknown>): { ok: true; value: ControlAction } | { ok: false; message: string } {
  switch (body.action) {
    case 'take':
    case 'release':
      return { ok: true, value: { action: body.action } };
    case 'give':
      return typeof body.to === 'string' && body.to !== '' && body.to.length <= 64
        ? { ok: true, value: { action: 'give', to: body.to } }
        : { ok: false, message: 'to: required with give; the id of a person in the session (from people[])' };
    case 'mode':
      return isControlMode(body.mode) ? { ok: true, value: { action: 'mode', mode: body.mode } } : { ok: false, message: `mode: must be one of ${CONTROL_MODES.join(', ')}` };
    default:
      return { ok: false, message: 'action: must be one of take, give, release, mode' };
  }
}

/** A viewer key: 16 to 64 base64url characters (the viewer makes 128 random bits). */
export function isViewerKey(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{16,64}$/.test(value);
}

/** @deprecated The former name of `isViewerKey`, kept for one version (decisions.md 149). */
export const isSeatKey = isViewerKey;

/**
 * The query parameter a viewer's RFB connection (and the node link's forwarded upgrade) carries
 * its viewer key in; its former name `seat` is read for one version (decisions.md 149).
 */
export const VIEWER_KEY_QUERY = 'viewer';

/** The viewer key a channel URL's query carries (`?viewer=`, else the former `?seat=`), if it is one. */
export function viewerKeyOf(query: URLSearchParams): string | undefined {
  const key = query.get(VIEWER_KEY_QUERY) ?? query.get('seat');
  return isViewerKey(key) ? key : undefined;
}

/** Longest display name a customer's app may give a viewer. */
export const VIEWER_NAME_MAX = 64;
