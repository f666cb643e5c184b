// The share API's paths as the viewer writes them and the engine reads them.
import { describe, expect, it } from 'vitest';
import { parseShareApiPath, parseSoundFormat, SHARE_API_ROUTES, shareApiPath, shareApiUrl } from '../../src/protocol/index.js';

describe('share API paths', () => {
  it('reads back every route it writes', () => {
    for (const route of SHARE_API_ROUTES) expect(parseShareApiPath(shareApiPath('Ab_9-x', route))).toEqual({ linkId: 'Ab_9-x', route });
  });

  it('writes the state at the link itself and the rest under it', () => {
    expect(shareApiPath('abc')).toBe('/share/abc');
    expect(shareApiPath('abc', 'view-only')).toBe('/share/abc/view-only');
  });

  it('gives RFB a WebSocket address and the rest the share base scheme', () => {
    expect(shareApiUrl('https://view.example.com/x', 'abc', 'rfb')).toBe('wss://view.example.com/x/share/abc/rfb');
    expect(shareApiUrl('http://localhost:8080', 'abc', 'rfb')).toBe('ws://localhost:8080/share/abc/rfb');
    expect(shareApiUrl('https://view.example.com/x', 'abc', 'sound')).toBe('wss://view.example.com/x/share/abc/sound');
    expect(shareApiUrl('http://127.0.0.1:8080', 'abc', 'sound')).toBe('ws://127.0.0.1:8080/share/abc/sound');
    expect(shareApiUrl('https://view.example.com', 'abc', 'events')).toBe('https://view.example.com/share/abc/events');
  });

  it('reads nothing else', () => {
    for (const path of ['/share/', '/share/abc/', '/share/abc/state', '/share/abc/other', '/share/a.b', `/share/${'a'.repeat(65)}`, '/x/share/abc', '/share/abc/rfb/x']) {
      expect(parseShareApiPath(path), path).toBeNull();
    }
    expect(parseShareApiPath(`/share/${'a'.repeat(64)}`)).toEqual({ linkId: 'a'.repeat(64), route: 'state' });
  });
});

describe('the sound channel\'s format message', () => {
  it('reads the format the engine sends', () => {
    expect(parseSoundFormat('{"codec":"opus","sampleRate":48000,"channels":2,"frameMs":20}')).toEqual({ codec: 'opus', sampleRate: 48000, channels: 2, frameMs: 20 });
  });

  it('refuses a codec, rate, channel count or frame length the player cannot play', () => {
    for (const text of ['', 'opus', 'null', '{"codec":"aac","sampleRate":48000,"channels":2,"frameMs":20}', '{"codec":"opus","sampleRate":"48000","channels":2,"frameMs":20}', '{"codec":"opus","sampleRate":48000,"channels":6,"frameMs":20}', '{"codec":"opus","sampleRate":48000,"channels":2,"frameMs":0}']) {
      expect(parseSoundFormat(text), text).toBeNull();
    }
  });
});
