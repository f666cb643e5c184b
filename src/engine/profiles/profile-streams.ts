// A saved profile's two streams (decisions.md 138), so that one transfer holds a bounded amount of
// memory whatever the profile's size. A save: what the session's tar hands back, read leniently
// (odd entries left out), then checked by the very rules a restore applies, then brotli, then
// sealed chunk by chunk, then written to the database chunk by chunk (its version row comes last,
// in the transaction that makes it current: profile-store.ts). A restore the other way: the
// chunks read one at a time, each authenticated before its bytes go on, brotli within the cap,
// the strict checker, the session's tar (or nothing, for the check before a create).
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { checkedArchive, type ArchiveChecker } from './archive-checker.js';
import type { ArchiveLimits } from './archive-format.js';
import type { ProfileStore } from './profile-store.js';
import { openSealed, SealedStateError } from './sealed-state.js';
import { boundedBytes, CHUNKED_FORMAT, compressor, decompressor, inWords, openChunks, sealChunks } from './sealed-stream.js';

/** Where sealed chunks are kept: a profile's versions (profile-store.ts), a hibernated session's state (hibernation-state.ts). */
export type ChunkRows = Pick<ProfileStore, 'version' | 'writeChunk' | 'chunk' | 'dropChunks'>;

export interface ProfileStreamContext {
  rows: ChunkRows;
  key: Buffer;
  limits: ArchiveLimits;
  /** The most a kept archive may unpack to, whole (headers, long names, padding included). */
  unpackedCap: number;
}

/** What a save wrote: the files' bytes, the sealed bytes and the chunks. */
export interface WrittenVersion {
  id: string;
  /** What the version row holds itself: the chunked format's byte. */
  data: Buffer;
  bytes: number;
  stored: number;
  chunks: number;
}

/**
 * Streams a session's archive into the database as version `versionId`'s chunks. Throws
 * ArchiveRefusal (what a restore would refuse, or damage) with nothing of it left stored.
 */
export async function writeVersion(context: ProfileStreamContext, profileId: string, versionId: string, archive: AsyncIterable<Buffer>, keep: (path: string) => boolean): Promise<WrittenVersion> {
  let lenient: ArchiveChecker | undefined;
  let stored = 0;
  let chunks = 0;
  const { limits, unpackedCap } = context;
  try {
    await pipeline(
      archive,
      // What a session hands back: odd entries (links, long paths) are left out, not fatal.
      (source: AsyncIterable<Buffer>) => checkedArchive(source, { limits, strict: false, keep, wholeCap: unpackedCap, counted: (checker) => (lenient = checker) }),
      // Kept only if a restore would take it: the same rules, on the very bytes sealed.
      (source: AsyncIterable<Buffer>) => checkedArchive(source, { limits, strict: true, wholeCap: unpackedCap }),
      compressor(),
      (source: AsyncIterable<Buffer>) => sealChunks(source, context.key, profileId, versionId),
      async (sealed: AsyncIterable<Buffer>) => {
        for await (const chunk of sealed) {
          await context.rows.writeChunk(profileId, versionId, chunks++, chunk);
          stored += chunk.length;
        }
      },
    );
  } catch (error) {
    await context.rows.dropChunks(versionId).catch(() => undefined);
    throw error;
  }
  return { id: versionId, data: Buffer.from([CHUNKED_FORMAT]), bytes: lenient!.bytes, stored, chunks };
}

/** A version's sealed chunks, read from the database one at a time. */
async function* storedChunks(rows: ChunkRows, versionId: string, count: number): AsyncGenerator<Buffer> {
  for (let seq = 0; seq < count; seq++) {
    const chunk = await rows.chunk(versionId, seq);
    // A missing chunk ends the stream: openChunks says it was cut short.
    if (!chunk) return;
    yield chunk;
  }
}

/** The compressed archive of a version, opened as it streams (one whole blob for a version saved before chunks). */
async function* opened(context: ProfileStreamContext, profileId: string, versionId: string): AsyncGenerator<Buffer> {
  const version = await context.rows.version(versionId);
  if (!version) throw new SealedStateError('the saved state is missing');
  if (version.chunks === 0) {
    yield openSealed(version.data, context.key, profileId, versionId);
    return;
  }
  yield* openChunks(storedChunks(context.rows, versionId, version.chunks), version.chunks, context.key, profileId, versionId);
}

/** Takes bytes and keeps none (the check before a create). */
function nowhere(): Writable {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}

/**
 * Streams version `versionId` of a profile, opened and checked by the restore's rules, into `sink`
 * (a session's tar; none: only checked), leaving out what `keep` does not. Throws
 * SealedStateError or ArchiveRefusal saying what was wrong, or the sink's own error.
 */
export async function readVersion(context: ProfileStreamContext, profileId: string, versionId: string, keep: (path: string) => boolean, sink: Writable = nowhere()): Promise<void> {
  const { limits, unpackedCap } = context;
  try {
    await pipeline(
      opened(context, profileId, versionId),
      decompressor(),
      (source: AsyncIterable<Buffer>) => boundedBytes(source, unpackedCap),
      (source: AsyncIterable<Buffer>) => checkedArchive(source, { limits, strict: true, keep, wholeCap: unpackedCap }),
      sink,
    );
  } catch (error) {
    throw inWords(error);
  }
}
