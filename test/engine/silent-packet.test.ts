// The packet the recorder fills a resting sound encoder's time with (decisions.md 119): the one
// the session's encoder makes of 10 ms of silence (libopus as the engine sets it, on the host's
// ffmpeg), and it decodes to 10 ms of silence.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { OggOpusReader } from '../../src/engine/runtime/capture/ogg-opus.js';
import { SILENT_PACKET } from '../../src/engine/runtime/capture/recorder.js';
import { decodeOpus } from '../helpers/sound.js';

describe('the silent packet', () => {
  it('is what the encoder makes of silence', () => {
    const encoded = spawnSync('ffmpeg', [
      '-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'anullsrc=r=48000:cl=stereo', '-t', '0.2',
      '-c:a', 'libopus', '-application', 'lowdelay', '-frame_duration', '10', '-b:a', '64k', '-vbr', 'constrained',
      '-f', 'ogg', 'pipe:1',
    ]);
    expect(encoded.status, String(encoded.stderr)).toBe(0);
    const packets = new OggOpusReader().push(encoded.stdout);
    expect(packets.length).toBeGreaterThanOrEqual(19);
    // After the first frames (the encoder's start), every packet is the silent one.
    for (const packet of packets.slice(2, -1)) expect(packet).toEqual(SILENT_PACKET);
  });

  it('decodes to 10 ms of silence each', async () => {
    const samples = await decodeOpus(Array.from({ length: 50 }, () => Buffer.from(SILENT_PACKET)));
    // 50 frames of 480 samples, less the 312 of pre-skip the helper's header states.
    expect(samples.length).toBe(50 * 480 - 312);
    expect(samples.every((sample) => sample === 0)).toBe(true);
  });
});
