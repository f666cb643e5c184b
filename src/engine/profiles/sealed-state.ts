// A saved profile at rest as one blob (decisions.md 88), the layout of versions saved before
// decisions.md 138, which are still opened (sealed-stream.ts writes and reads today's chunks; a
// blob of this layout is at most the cap's size, read whole): its archive compressed (brotli: Node 20 has no zstd)
// and encrypted with AES-256-GCM under the profile key, bound to its profile and version (the
// additional data), so a blob moved to another profile or account does not open. Opening
// decompresses at most the cap: a blob that would grow past it (a compression bomb) is refused.
// No ratio is judged (decisions.md 129): only a blob sealed under the key reaches the
// decompressor, and zeros a page wrote compress a million-fold and must still open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';
import { promisify } from 'node:util';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);
/** The layout's version byte, then the 12-byte nonce, the 16-byte tag, the ciphertext. */
const FORMAT = 1;
const NONCE = 12;
const TAG = 16;
/** Brotli at quality 5: about gzip's speed with a smaller result on a browser profile (SQLite pages, LevelDB logs). */
const QUALITY = 5;

/** Why a saved state could not be opened: not ours, tampered with, or beyond the caps. */
export class SealedStateError extends Error {}

function additionalData(profileId: string, versionId: string): Buffer {
  return Buffer.from(`rbk-profile:${profileId}:${versionId}`, 'utf8');
}

export async function sealState(archive: Buffer, key: Buffer, profileId: string, versionId: string): Promise<Buffer> {
  const packed = await compress(archive, { params: { [constants.BROTLI_PARAM_QUALITY]: QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: archive.length } });
  const nonce = randomBytes(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(additionalData(profileId, versionId));
  const body = Buffer.concat([cipher.update(packed), cipher.final()]);
  return Buffer.concat([Buffer.from([FORMAT]), nonce, cipher.getAuthTag(), body]);
}

/** The compressed archive a sealed state of format 1 holds, authenticated whole. Throws SealedStateError. */
export function openSealed(sealed: Buffer, key: Buffer, profileId: string, versionId: string): Buffer {
  if (sealed.length < 1 + NONCE + TAG || sealed[0] !== FORMAT) throw new SealedStateError('the saved state is not in a form this service reads');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1, 1 + NONCE));
  decipher.setAAD(additionalData(profileId, versionId));
  decipher.setAuthTag(sealed.subarray(1 + NONCE, 1 + NONCE + TAG));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(1 + NONCE + TAG)), decipher.final()]);
  } catch {
    throw new SealedStateError('the saved state does not open with this service\'s profile key (another key, or it was altered)');
  }
}

/**
 * The archive a sealed state holds. `maxBytes` caps the decompressed size, so no blob, however it
 * was packed, costs the engine more memory than that; a tampered blob fails its tag before.
 */
export async function openState(sealed: Buffer, key: Buffer, profileId: string, versionId: string, maxBytes: number): Promise<Buffer> {
  const packed = openSealed(sealed, key, profileId, versionId);
  try {
    return await decompress(packed, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || /Cannot create a Buffer larger|maxOutputLength/i.test(String(error))) {
      throw new SealedStateError(`the saved state would grow past ${maxBytes} bytes when unpacked`);
    }
    throw new SealedStateError('the saved state is damaged (it does not decompress)');
  }
}
