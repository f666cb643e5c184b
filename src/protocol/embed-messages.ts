// The message API between a framed viewer and the page around it (issue 44, decisions.md 135):
// `window.postMessage` both ways, each message `{ rbk: 1, type, ... }`. The viewer (the engine's
// share page in an iframe) posts events only to the origin that framed it, one of those its link
// allows (protocol/embed.ts); it takes commands only from its parent window at that origin. Each
// command is a stranger's input, parsed here; anything else is ignored and counted. Written with
// zod's tree-shakable build (`zod/mini`): the element and the viewer site carry these into any
// page, where the full build alone would weigh some 90 KB gzipped.
import * as z from 'zod/mini';
import { CONTROL_MODES } from './control.js';
import { VIEWER_STATES } from './share.js';

/** The message API's version: the `rbk` of every message. Another number is not understood. */
export const EMBED_MESSAGE_VERSION = 1;

const version = z.literal(EMBED_MESSAGE_VERSION);

const tabSchema = z.object({ id: z.string(), title: z.string(), url: z.string(), active: z.boolean(), favicon: z.optional(z.string()) });
const driverSchema = z.object({
  id: z.string(),
  kind: z.enum(['person', 'program']),
  name: z.optional(z.string()),
  guest: z.optional(z.number()),
  owner: z.optional(z.literal(true)),
});
const personSchema = z.object({
  ...driverSchema.shape,
  /** Watching through a view-only link: never drives. */
  watching: z.optional(z.literal(true)),
  /** Asked for control and waits. */
  asks: z.optional(z.literal(true)),
});

/** Viewer -> page. */
export const embedEventSchema = z.discriminatedUnion('type', [
  /** The viewer knows who framed it and listens; sent again in answer to each `hello`, followed by the latest state, tabs and control. */
  z.object({ rbk: version, type: z.literal('ready'), viewOnly: z.boolean() }),
  /** The screen: waiting (the session starts), running, ended, gone (the link is no longer valid). */
  z.object({ rbk: version, type: z.literal('state'), state: z.enum(VIEWER_STATES) }),
  /** The remote browser's tabs, in the order they opened ([] once it tells none). */
  z.object({ rbk: version, type: z.literal('tabs'), tabs: z.array(tabSchema) }),
  /** Who drives: the mode, the driver (null: nobody, or everyone in `shared`), this viewer's own id once known, whether it waits for control. */
  z.object({ rbk: version, type: z.literal('control'), mode: z.enum(CONTROL_MODES), driver: z.nullable(driverSchema), you: z.nullable(z.string()), asking: z.boolean() }),
  /** Who is attached now (people and programs), with this viewer's own id; sent whenever it changes, while the session tells it (`people` in the share state). */
  z.object({ rbk: version, type: z.literal('people'), people: z.array(personSchema), you: z.nullable(z.string()) }),
  /** Someone came (after the first `people`, which is the starting picture, not news). */
  z.object({ rbk: version, type: z.literal('joined'), person: personSchema }),
  /** Someone went. */
  z.object({ rbk: version, type: z.literal('left'), person: personSchema }),
  /** The remote browser finished a download while the viewer watched (a link that controls: only it is offered files). */
  z.object({ rbk: version, type: z.literal('download'), name: z.string(), size: z.number(), created: z.string() }),
  /** Whether the session is being recorded now (everyone watching is told). */
  z.object({ rbk: version, type: z.literal('recording'), recording: z.boolean() }),
  /** The session's sound at this viewer: `available` (`yes`; `no-webcodecs`: this browser cannot play it; `no-sound`: the session has none), muted, volume (0-1), `blocked` until a press in the frame lets it play. */
  z.object({ rbk: version, type: z.literal('sound'), available: z.enum(['yes', 'no-webcodecs', 'no-sound']), muted: z.boolean(), volume: z.number(), blocked: z.boolean() }),
  /** The viewer left (the Leave button or the `leave` command): its connections are closed; `leaveUrl` is where its own page would go. */
  z.object({ rbk: version, type: z.literal('closed'), leaveUrl: z.nullable(z.string()) }),
  /** A command was not understood or was refused (`command`: its type, null when it had none). */
  z.object({ rbk: version, type: z.literal('error'), command: z.nullable(z.string()), message: z.string() }),
]);
export type EmbedEvent = z.infer<typeof embedEventSchema>;
export type EmbedEventType = EmbedEvent['type'];

/** Page -> viewer. */
export const embedCommandSchema = z.discriminatedUnion('type', [
  /** Asks for `ready` and the latest events (a page that started listening late). */
  z.object({ rbk: version, type: z.literal('hello') }),
  /** In `one` mode: ask for control, stop asking, hand it back, or (the owner's viewer) take it. */
  z.object({ rbk: version, type: z.literal('control'), action: z.enum(['ask', 'cancel', 'release', 'take']) }),
  /** Show or close one of the remote browser's tabs (its `id` from `tabs`), open one, or take one to another http(s) address (`go`, issue 44). */
  z.discriminatedUnion('action', [
    z.object({ rbk: version, type: z.literal('tab'), action: z.enum(['switch', 'close']), tab: z.string().check(z.minLength(1), z.maxLength(100)) }),
    z.object({ rbk: version, type: z.literal('tab'), action: z.literal('open'), url: z.optional(z.string().check(z.maxLength(2048))) }),
    z.object({ rbk: version, type: z.literal('tab'), action: z.literal('go'), tab: z.string().check(z.minLength(1), z.maxLength(100)), url: z.string().check(z.minLength(1), z.maxLength(2048)) }),
  ]),
  /** Puts the keyboard focus in the remote screen (the host focuses the iframe first: a browser moves focus into a frame only from its parent). */
  z.object({ rbk: version, type: z.literal('focus') }),
  /** Mutes or unmutes the session's sound at this viewer, or sets its volume (0-1); at least one of them. */
  z.object({ rbk: version, type: z.literal('sound'), muted: z.optional(z.boolean()), volume: z.optional(z.number().check(z.gte(0), z.lte(1))) }).check(
    z.refine((command) => command.muted !== undefined || command.volume !== undefined, { message: 'give muted, volume or both', path: ['muted'] }),
  ),
  /** The live screen in full screen, or out of it. A browser allows it only after a press in the frame, or when the page delegates it (`postMessage(..., { targetOrigin, delegate: "fullscreen" })`, Chromium); else `error`. */
  z.object({ rbk: version, type: z.literal('fullscreen'), on: z.boolean() }),
  /** Leaves as the Leave button does: the viewer closes its connections and answers `closed`. */
  z.object({ rbk: version, type: z.literal('leave') }),
]);
export type EmbedCommand = z.infer<typeof embedCommandSchema>;

/**
 * Reads a message the page posted: the command, or why it is not one (`command`: its type when
 * it named one). Messages of another version are refused, never guessed at.
 */
export function parseEmbedCommand(data: unknown): { ok: true; command: EmbedCommand } | { ok: false; command: string | null; message: string } {
  const type = typeof data === 'object' && data !== null && typeof (data as { type?: unknown }).type === 'string' ? ((data as { type: string }).type.slice(0, 40)) : null;
  const rbk = typeof data === 'object' && data !== null ? (data as { rbk?: unknown }).rbk : undefined;
  if (typeof rbk === 'number' && rbk !== EMBED_MESSAGE_VERSION) return { ok: false, command: type, message: `rbk: version ${rbk} is not understood; this viewer speaks ${EMBED_MESSAGE_VERSION}` };
  if (rbk !== EMBED_MESSAGE_VERSION) return { ok: false, command: type, message: `not a message of this viewer: send { rbk: ${EMBED_MESSAGE_VERSION}, type, ... }` };
  const parsed = embedCommandSchema.safeParse(data);
  if (parsed.success) return { ok: true, command: parsed.data };
  return { ok: false, command: type, message: `not understood: ${parsed.error.issues[0]?.path.join('.') || 'type'}: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
}

/** Whether a message the viewer posted is one of its events (the page's side checks with this). */
export function parseEmbedEvent(data: unknown): EmbedEvent | null {
  const parsed = embedEventSchema.safeParse(data);
  return parsed.success ? parsed.data : null;
}

/** What a side sends without the version, which the sender adds. */
export type WithoutVersion<T> = T extends unknown ? Omit<T, 'rbk'> : never;
