// Session handles: what the browser holds instead of a vmId. A handle is the vmId encrypted and
// signed with the route's secret for one end user, so the route keeps no session table.
// Web Crypto only (no node:crypto), so the route runs wherever Request and crypto.subtle exist.

/**
 * Layout: version (1 byte) | IV (16) | AES-256-CBC(vmId) | HMAC-SHA256 tag (32), base64url.
 * The tag covers the version, IV and ciphertext and the end user's id (length-prefixed), so a
 * handle opened for another user fails exactly like a forged or altered one. Encrypt-then-MAC,
 * as Fernet does; the vmId stays out of the browser's sight.
 */
const VERSION = 1;
const IV_BYTES = 16;
const TAG_BYTES = 32;
const BLOCK = 16;
/** Longer strings are not handles: refused before any decoding or crypto. */
const HANDLE_MAX_CHARS = 512;
const SALT = 'remote-browser-kit/proxy-route';

export const SECRET_MIN_CHARS = 32;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export interface SessionHandles {
  /**
   * A handle for this session and this end user. `stable`: the same handle each time for the same
   * value and user (its IV derived from both: a saved profile's handle, which a picker compares).
   */
  seal(vmId: string, userId: string, stable?: boolean): Promise<string>;
  /** The vmId, or null when the handle is malformed, altered, forged, or another user's. */
  open(handle: string, userId: string): Promise<string | null>;
  /** The browser's idempotency key, made the user's own: two users' equal keys never meet upstream. */
  scopeIdempotencyKey(key: string, userId: string): Promise<string>;
  /** A short tag only this route makes for this user (16 characters): it marks the user's saved profiles among the account's. */
  ownerTag(userId: string): Promise<string>;
}

export function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]+$/.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** `label | len(userId) | userId`: the length prefix keeps two different users' inputs apart. */
function userBound(label: string, userId: string): Uint8Array {
  const id = encoder.encode(userId);
  const length = new Uint8Array(4);
  new DataView(length.buffer).setUint32(0, id.length);
  return concat(encoder.encode(label), length, id);
}

export async function createSessionHandles(secret: string): Promise<SessionHandles> {
  const subtle = globalThis.crypto.subtle;
  const master = await subtle.importKey('raw', encoder.encode(secret), 'HKDF', false, ['deriveKey']);
  const derive = (info: string, algorithm: AesKeyGenParams | HmacKeyGenParams, usages: KeyUsage[]) =>
    subtle.deriveKey({ name: 'HKDF', hash: 'SHA-256', salt: encoder.encode(SALT), info: encoder.encode(info) }, master, algorithm, false, usages);
  // Separate keys per purpose: a value made for one purpose is never valid for another.
  const [encryption, signature, idempotency] = await Promise.all([
    derive('session handle encryption', { name: 'AES-CBC', length: 256 }, ['encrypt', 'decrypt']),
    derive('session handle signature', { name: 'HMAC', hash: 'SHA-256', length: 256 }, ['sign', 'verify']),
    derive('idempotency key scope', { name: 'HMAC', hash: 'SHA-256', length: 256 }, ['sign']),
  ]);
  const owner = await derive('profile owner tag', { name: 'HMAC', hash: 'SHA-256', length: 256 }, ['sign']);

  return {
    async seal(vmId, userId, stable = false) {
      const iv = stable
        ? new Uint8Array(await subtle.sign('HMAC', owner, concat(userBound('stable handle', userId), encoder.encode(vmId)))).slice(0, IV_BYTES)
        : globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const ciphertext = new Uint8Array(await subtle.encrypt({ name: 'AES-CBC', iv }, encryption, encoder.encode(vmId)));
      const body = concat(new Uint8Array([VERSION]), iv, ciphertext);
      const tag = new Uint8Array(await subtle.sign('HMAC', signature, concat(userBound('handle', userId), body)));
      return toBase64Url(concat(body, tag));
    },

    async open(handle, userId) {
      if (typeof handle !== 'string' || handle.length > HANDLE_MAX_CHARS) return null;
      const bytes = fromBase64Url(handle);
      // One spelling per handle: spare bits in the last character would make look-alikes.
      if (!bytes || bytes[0] !== VERSION || toBase64Url(bytes) !== handle) return null;
      const cipherBytes = bytes.length - 1 - IV_BYTES - TAG_BYTES;
      if (cipherBytes < BLOCK || cipherBytes % BLOCK !== 0) return null;
      const body = bytes.subarray(0, bytes.length - TAG_BYTES);
      const tag = bytes.slice(bytes.length - TAG_BYTES);
      // verify() compares in constant time.
      if (!(await subtle.verify('HMAC', signature, tag, concat(userBound('handle', userId), body)))) return null;
      try {
        const iv = bytes.slice(1, 1 + IV_BYTES);
        const plain = await subtle.decrypt({ name: 'AES-CBC', iv }, encryption, bytes.slice(1 + IV_BYTES, bytes.length - TAG_BYTES));
        return decoder.decode(plain);
      } catch {
        return null;
      }
    },

    async scopeIdempotencyKey(key, userId) {
      const mac = new Uint8Array(await subtle.sign('HMAC', idempotency, concat(userBound('idempotency', userId), encoder.encode(key))));
      return `rbk_${toBase64Url(mac)}`;
    },

    async ownerTag(userId) {
      const mac = new Uint8Array(await subtle.sign('HMAC', owner, concat(userBound('profile owner', userId))));
      return toBase64Url(mac.subarray(0, 12));
    },
  };
}
