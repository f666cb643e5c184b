// The video encoder's output as the engine reads it (src/engine/runtime/capture/flv-avc.ts), the video
// channel's format message and the watcher's receipts (src/protocol/video.ts): real FLV from
// Debian's ffmpeg and libx264, cut into the avcC record and one access unit per frame, however
// the pipe splits it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FlvAvcReader, FlvFormatError, type FlvAvcItem } from '../../src/engine/runtime/capture/flv-avc.js';
import { avcCodecString, parseVideoFormat, parseVideoReceipt, videoReceipt } from '../../src/protocol/video.js';

async function encodedClip(): Promise<Buffer> {
  const { stdout } = await promisify(execFile)(
    'ffmpeg',
    ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=30:duration=1', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-profile:v', 'baseline', '-g', '10', '-f', 'flv', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

describe('FlvAvcReader', () => {
  it('gives the avcC record, then every frame with its key flag, however the bytes arrive', async () => {
    const flv = await encodedClip();
    const whole = new FlvAvcReader().push(flv);
    expect(whole[0]!.kind).toBe('config');
    const frames = whole.filter((item): item is Extract<FlvAvcItem, { kind: 'frame' }> => item.kind === 'frame');
    expect(frames).toHaveLength(30);
    expect(frames.filter((frame) => frame.key).length).toBe(3);
    expect(frames[0]!.key).toBe(true);
    // Each frame is AVC: 4-byte lengths that add up to the frame.
    for (const { data } of frames) {
      let at = 0;
      while (at < data.length) at += 4 + data.readUInt32BE(at);
      expect(at).toBe(data.length);
    }
    const reader = new FlvAvcReader();
    const piecewise: FlvAvcItem[] = [];
    for (let at = 0; at < flv.length; at += 777) piecewise.push(...reader.push(flv.subarray(at, at + 777)));
    expect(piecewise).toEqual(whole);

    const avcC = (whole[0] as Extract<FlvAvcItem, { kind: 'config' }>).avcC;
    expect(avcCodecString(avcC)).toMatch(/^avc1\.42C0[0-9A-F]{2}$/);
    const format = { codec: avcCodecString(avcC), description: avcC.toString('base64') };
    expect(parseVideoFormat(JSON.stringify(format))).toEqual(format);
  });

  it('refuses a stream that is not FLV', () => {
    expect(() => new FlvAvcReader().push(Buffer.from('OggS and more bytes'))).toThrow(FlvFormatError);
  });
});

describe('parseVideoFormat', () => {
  it('reads only a well-formed format', () => {
    expect(parseVideoFormat('{"codec":"avc1.42C01F","description":"AUIAH/+hAA=="}')).toEqual({ codec: 'avc1.42C01F', description: 'AUIAH/+hAA==' });
    // The encoder's bit rate now, when the engine says it (decisions.md 68); anything else is left out.
    expect(parseVideoFormat('{"codec":"avc1.42C01F","description":"AUIAH/+hAA==","bitrateKbps":1200}')).toEqual({ codec: 'avc1.42C01F', description: 'AUIAH/+hAA==', bitrateKbps: 1200 });
    expect(parseVideoFormat('{"codec":"avc1.42C01F","description":"AUIAH/+hAA==","bitrateKbps":"fast"}')).toEqual({ codec: 'avc1.42C01F', description: 'AUIAH/+hAA==' });
    for (const text of ['nope', 'null', '{"codec":"vp8","description":"AA=="}', '{"codec":"avc1.42C01F"}', '{"codec":"avc1.42C01F","description":"<script>"}']) {
      expect(parseVideoFormat(text)).toBeNull();
    }
  });
});

describe('video receipts', () => {
  it('carry the frame bytes read in all, as text or as the bytes a node link carried', () => {
    expect(parseVideoReceipt(videoReceipt(123_456))).toBe(123_456);
    expect(parseVideoReceipt(new TextEncoder().encode(videoReceipt(42)))).toBe(42);
    for (const data of ['', '-1', '1.5', '12ab', '{"codec":"avc1.42C01F"}', '9'.repeat(16)]) expect(parseVideoReceipt(data)).toBeNull();
  });
});
