// The channels this engine offers, by name. Registering is the one step that adds a channel
// (sound, files, automation): the router, the node link and presence then serve it as they serve
// RFB. A bad registration is refused with what is wrong, and the registry is left as it was.
import { SHARE_API_OWN_ROUTES } from '../../protocol/share-api.js';
import { CHANNEL_CREDENTIALS, type Channel } from './channel.js';
import { MAX_MESSAGE_BYTES } from './door.js';
import { ATTACHMENT_KINDS } from './presence.js';

/** A channel name: what the share API's route and the node link's path carry. */
export const CHANNEL_NAME = /^[a-z][a-z0-9-]{0,30}$/;

export class ChannelRegistry {
  private readonly channels = new Map<string, Channel>();

  register(channel: Channel): this {
    if (typeof channel.name !== 'string' || !CHANNEL_NAME.test(channel.name)) {
      throw new Error(`channel name ${JSON.stringify(channel.name)}: use 1 to 31 lowercase letters, digits or dashes, starting with a letter`);
    }
    if ((SHARE_API_OWN_ROUTES as readonly string[]).includes(channel.name)) {
      throw new Error(`channel name "${channel.name}": the share API has a route of its own by that name (${SHARE_API_OWN_ROUTES.join(', ')}); choose another`);
    }
    if (this.channels.has(channel.name)) throw new Error(`channel "${channel.name}" is registered already; each channel has one registration`);
    if (channel.opensWith.length === 0) throw new Error(`channel "${channel.name}": name at least one credential that opens it (${CHANNEL_CREDENTIALS.join(', ')})`);
    const unknown = channel.opensWith.find((credential) => !CHANNEL_CREDENTIALS.includes(credential));
    if (unknown !== undefined) throw new Error(`channel "${channel.name}": unknown credential "${String(unknown)}"; expected ${CHANNEL_CREDENTIALS.join(', ')}`);
    if (!ATTACHMENT_KINDS.includes(channel.attachment)) {
      throw new Error(`channel "${channel.name}": unknown attachment kind "${String(channel.attachment)}"; expected ${ATTACHMENT_KINDS.join(', ')}`);
    }
    const { seats, files, messageBytes } = channel.needs ?? {};
    if (typeof channel.offered !== 'function') throw new Error(`channel "${channel.name}": say whether a session is offered it: offered(row, plan)`);
    const count = (n: unknown) => Number.isInteger(n) && (n as number) >= 0;
    if (!seats || !count(seats.control) || !count(seats.view) || !count(files)) {
      throw new Error(`channel "${channel.name}": declare its needs at the door: { seats: { control, view }, files, messageBytes }, whole numbers of 0 or more`);
    }
    if (!Number.isInteger(messageBytes) || messageBytes < 1 || messageBytes > MAX_MESSAGE_BYTES) {
      throw new Error(`channel "${channel.name}": declare the largest message a caller may send (needs.messageBytes), 1 to ${MAX_MESSAGE_BYTES} bytes`);
    }
    this.channels.set(channel.name, channel);
    return this;
  }

  get(name: string): Channel | undefined {
    return this.channels.get(name);
  }

  has(name: string): boolean {
    return this.channels.has(name);
  }

  names(): string[] {
    return [...this.channels.keys()];
  }

  /** Every channel, in the order of registration (the viewer state's flags follow it). */
  all(): Channel[] {
    return [...this.channels.values()];
  }

  /** Closes every channel's per-session state (the engine is closing). */
  close(): void {
    for (const channel of this.channels.values()) channel.close();
  }
}
