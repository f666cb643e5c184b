// The one rule of a session's encoders (sound, video): an encoder runs while someone is connected
// to it. Who is connected is its audience, one stream each: the first to join starts the encoder,
// the last to leave stops it, and when the output stops every stream is told why. neko keeps the
// same rule in one type for its audio and video pipelines (StreamSinkManagerCtx).

/** One stream of an encoder's output: told once, with the reason, when it ends. */
export interface AudienceMember {
  finish(reason: string): void;
}

/** What an audience drives: the encoder behind it. */
export interface AudienceEncoder<S> {
  /** The first member joined (none was connected): the encoder starts. */
  start(): void;
  /** The last member left, or the output stopped: the encoder stops. Called again when already stopped. */
  stop(): void;
  /** Any member joined, after `start` for the first (video gives a newcomer a key frame). */
  joined?(member: S): void;
}

export class Audience<S extends AudienceMember> {
  private readonly members = new Set<S>();
  /** Why the part ended (its session ended, its server died): whoever joins later is told at once. */
  private endedWith: string | null = null;

  constructor(private readonly encoder: AudienceEncoder<S>) {}

  get size(): number {
    return this.members.size;
  }

  [Symbol.iterator](): IterableIterator<S> {
    return this.members.values();
  }

  /**
   * Adds a member; the first starts the encoder. Once the part has ended, the member is told why
   * on the next tick (after its caller has listened for its end) and never joins.
   */
  join(member: S): S {
    const ended = this.endedWith;
    if (ended !== null) {
      process.nextTick(() => member.finish(ended));
      return member;
    }
    this.members.add(member);
    if (this.members.size === 1) this.encoder.start();
    this.encoder.joined?.(member);
    return member;
  }

  /** A member left (it closed, or was finished); the last one out stops the encoder. */
  leave(member: S): void {
    if (this.members.delete(member) && this.members.size === 0) this.encoder.stop();
  }

  /** The output stopped (the encoder failed): every member is told why; a later join starts it again. */
  endAll(reason: string): void {
    for (const member of [...this.members]) member.finish(reason);
    this.encoder.stop();
  }

  /** The part ended: every member is told why, the encoder stops, and no one joins any more. */
  close(reason: string): void {
    this.endedWith = reason;
    this.endAll(reason);
  }
}
