// A saved profile at rest as a stream of sealed chunks (decisions.md 138), so that neither a save
// nor a restore ever holds the profile whole: the archive compressed with brotli as it streams,
// the compressed bytes cut into chunks of CHUNK_BYTES, each encrypted on its own with AES-256-GCM
// under the profile key with its own random nonce and tag, its additional data naming the format,
// the profile, the version, the chunk's index and whether it is the last. A chunk moved to
// another place, another version or profile, a chunk left out, the stream cut short or grown
// past its last chunk fails a tag; each chunk is authenticated whole before a byte of it is
// handed on, so nothing unauthenticated ever reaches the decompressor. The single-blob layout of
// earlier versions (sealed-state.ts, format 1) is still read, and is never written.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { constants, createBrotliCompress, createBrotliDecompress, type BrotliCompress, type BrotliDecompress } from 'node:zlib';
import { SealedStateError } from './sealed-state.js';

/** The chunked layout's version byte: the first byte of each chunk, and all a version's own row holds. */
export const CHUNKED_FORMAT = 2;
/** Compressed bytes a chunk holds (the last may hold fewer). */
export const CHUNK_BYTES = 1024 * 1024;
const NONCE = 12;
const TAG = 16;
/** Brotli at quality 5 (decisions.md 88) with its default 4 MiB window (lgwin 22), which bounds what a decompressor holds. */
const QUALITY = 5;
const WINDOW_BITS = 22;

function additionalData(profileId: string, versionId: string, index: number, last: boolean): Buffer {
  return Buffer.from(`rbk-profile:${CHUNKED_FORMAT}:${profileId}:${versionId}:${index}:${last ? 'last' : 'more'}`, 'utf8');
}

function sealChunk(plain: Buffer, key: Buffer, profileId: string, versionId: string, index: number, last: boolean): Buffer {
  const nonce = randomBytes(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(additionalData(profileId, versionId, index, last));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([Buffer.from([CHUNKED_FORMAT]), nonce, cipher.getAuthTag(), body]);
}

/** The compressor a save streams its checked archive through. */
export function compressor(): BrotliCompress {
  return createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: QUALITY, [constants.BROTLI_PARAM_LGWIN]: WINDOW_BITS } });
}

/** The decompressor a restore streams opened chunks through (bounded after it by boundedBytes). */
export function decompressor(): BrotliDecompress {
  return createBrotliDecompress();
}

/**
 * Cuts compressed bytes into chunks of CHUNK_BYTES and seals each; answers them in order. A chunk
 * is sealed once the next byte is known to exist (or the stream to end), so the last is marked so.
 */
export async function* sealChunks(source: AsyncIterable<Buffer>, key: Buffer, profileId: string, versionId: string): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let index = 0;
  for await (const piece of source) {
    held.push(piece);
    heldBytes += piece.length;
    // Only a chunk that more bytes follow is sealed here: the last is sealed at the end.
    while (heldBytes > CHUNK_BYTES) {
      const whole = Buffer.concat(held, heldBytes);
      yield sealChunk(whole.subarray(0, CHUNK_BYTES), key, profileId, versionId, index++, false);
      held = [whole.subarray(CHUNK_BYTES)];
      heldBytes -= CHUNK_BYTES;
    }
  }
  yield sealChunk(Buffer.concat(held, heldBytes), key, profileId, versionId, index, true);
}

/**
 * Opens a version's `count` chunks in order, each authenticated whole before its bytes go on.
 * Throws SealedStateError naming the chunk that does not open.
 */
export async function* openChunks(chunks: AsyncIterable<Buffer>, count: number, key: Buffer, profileId: string, versionId: string): AsyncGenerator<Buffer> {
  let index = 0;
  for await (const sealed of chunks) {
    if (index >= count) throw new SealedStateError('the saved state holds more chunks than it says');
    if (sealed.length < 1 + NONCE + TAG || sealed[0] !== CHUNKED_FORMAT) throw new SealedStateError(`chunk ${index + 1} of ${count} of the saved state is not in a form this service reads`);
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1, 1 + NONCE));
    decipher.setAAD(additionalData(profileId, versionId, index, index === count - 1));
    decipher.setAuthTag(sealed.subarray(1 + NONCE, 1 + NONCE + TAG));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(sealed.subarray(1 + NONCE + TAG)), decipher.final()]);
    } catch {
      throw new SealedStateError(`chunk ${index + 1} of ${count} of the saved state does not open with this service's profile key (another key, or it was altered, moved or cut)`);
    }
    index++;
    yield plain;
  }
  if (index !== count) throw new SealedStateError(`the saved state is cut short: ${index} of its ${count} chunks are there`);
}

/** Passes bytes on until more than `maxBytes` came: then refuses (a compression bomb costs nothing). */
export async function* boundedBytes(source: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<Buffer> {
  let seen = 0;
  for await (const piece of source) {
    seen += piece.length;
    if (seen > maxBytes) throw new SealedStateError(`the saved state would grow past ${maxBytes} bytes when unpacked`);
    yield piece;
  }
}

/** A decompressor's own error (damaged data) in the product's words; any other error as it is. */
export function inWords(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  return /^(Z_|ERR__|ERR_BROTLI)/.test(code) ? new SealedStateError('the saved state is damaged (it does not decompress)') : error;
}
