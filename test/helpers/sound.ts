// Test helper for session sound: hearing what a listener received, on the host. The Opus packets
// are put back into an Ogg Opus stream (RFC 7845), decoded by ffmpeg to 48 kHz mono samples, and
// the loudest frequency found (Goertzel's algorithm over a grid: a small DFT). Also: a listener
// on a sound channel's address, and the remote page that plays the tone.
import { spawn } from 'node:child_process';
import WebSocket from 'ws';

/** Ogg's CRC-32: polynomial 0x04c11db7, not reflected, starting at 0. */
const CRC_TABLE = Array.from({ length: 256 }, (_, i) => {
  let r = i << 24;
  for (let j = 0; j < 8; j++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
  return r >>> 0;
});

function crc(bytes: Buffer): number {
  let c = 0;
  for (const byte of bytes) c = ((c << 8) ^ CRC_TABLE[((c >>> 24) & 0xff) ^ byte]!) >>> 0;
  return c;
}

function page(packet: Buffer, sequence: number, granule: bigint, flags: number): Buffer {
  const lacing = [...Array<number>(Math.floor(packet.length / 255)).fill(255), packet.length % 255];
  const header = Buffer.alloc(27);
  header.write('OggS', 0);
  header[5] = flags;
  header.writeBigInt64LE(granule, 6);
  header.writeUInt32LE(0x5eed, 14);
  header.writeUInt32LE(sequence, 18);
  header[26] = lacing.length;
  const whole = Buffer.concat([header, Buffer.from(lacing), packet]);
  whole.writeUInt32LE(crc(whole), 22);
  return whole;
}

/** An Ogg Opus stream (48 kHz stereo, `frameSamples` a packet: the engine's 10 ms) holding `packets`. */
export function oggOpus(packets: Buffer[], frameSamples = 480): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0);
  head[8] = 1;
  head[9] = 2;
  head.writeUInt16LE(312, 10);
  head.writeUInt32LE(48000, 12);
  const vendor = Buffer.from('test');
  const tags = Buffer.concat([Buffer.from('OpusTags'), Buffer.from([vendor.length, 0, 0, 0]), vendor, Buffer.alloc(4)]);
  const pages = [page(head, 0, 0n, 0x02), page(tags, 1, 0n, 0)];
  packets.forEach((packet, i) => pages.push(page(packet, i + 2, BigInt((i + 1) * frameSamples), i === packets.length - 1 ? 0x04 : 0)));
  return Buffer.concat(pages);
}

/** Decodes Opus packets to 48 kHz mono samples with ffmpeg on the host. */
export function decodeOpus(packets: Buffer[]): Promise<Int16Array> {
  return new Promise((resolve, reject) => {
    const ffmpeg = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'ogg', '-i', 'pipe:0', '-ac', '1', '-ar', '48000', '-f', 's16le', 'pipe:1']);
    const out: Buffer[] = [];
    let err = '';
    ffmpeg.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    ffmpeg.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    ffmpeg.on('error', reject);
    ffmpeg.on('close', (code) => {
      if (code !== 0) return reject(new Error(`ffmpeg could not decode the packets: ${err}`));
      const bytes = Buffer.concat(out);
      resolve(new Int16Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 2)));
    });
    ffmpeg.stdin.end(oggOpus(packets));
  });
}

/** The frequency (Hz, on a 5 Hz grid from 100 to 4000) with the most power in `samples` at 48 kHz. */
export function loudestFrequency(samples: Int16Array): number {
  let best = 0;
  let bestPower = -1;
  for (let f = 100; f <= 4000; f += 5) {
    const coefficient = 2 * Math.cos((2 * Math.PI * f) / 48000);
    let s1 = 0;
    let s2 = 0;
    for (const x of samples) {
      const s0 = x + coefficient * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    const power = s1 * s1 + s2 * s2 - coefficient * s1 * s2;
    if (power > bestPower) {
      bestPower = power;
      best = f;
    }
  }
  return best;
}

/** The root mean square of `samples`: silence is near 0, a tone at half scale about 11,000. */
export function loudness(samples: Int16Array): number {
  let sum = 0;
  for (const x of samples) sum += x * x;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

/** Listens on a sound channel's WebSocket address for `ms` from the first packet; answers every message as it came (the format first). */
export function listenTo(address: string, ms: number): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(address);
    const messages: Buffer[] = [];
    // `ms` of sound from its first packet: the session's encoder starts with the listener, and
    // on a loaded machine its start alone can take seconds (at most 30 s are waited for it).
    const noSound = setTimeout(() => socket.close(), 30_000);
    socket.on('message', (data: Buffer) => {
      messages.push(Buffer.from(data));
      if (messages.length === 2) {
        clearTimeout(noSound);
        setTimeout(() => socket.close(), ms);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(noSound);
      resolve(messages);
    });
  });
}

/** A page's script that plays a 440 Hz tone from load on; `tone` is its oscillator, for a test to retune. */
export const TONE_SCRIPT = `addEventListener('load', function () {
  var context = new AudioContext({ sampleRate: 48000 });
  var gain = context.createGain();
  gain.gain.value = 0.5;
  var tone = context.createOscillator();
  tone.frequency.value = 440;
  tone.connect(gain).connect(context.destination);
  tone.start();
  window.tone = tone;
});`;

/** The remote page: a 440 Hz tone from load on (TONE_SCRIPT). */
export const TONE_PAGE = `<!doctype html><title>Tone</title><script>
${TONE_SCRIPT}
</script><body style="background:#fff">tone</body>`;
