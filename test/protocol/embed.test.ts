// The framing origins' check and the message API's command parser (issue 44, decisions.md 134-135):
// what an account may list, what a session's page writes into frame-ancestors, and what the
// framed viewer takes from the page around it (anything else refused with words naming why).
import { describe, expect, it } from 'vitest';
import { embedOriginProblem, framingOrigins, parseEmbedCommand, parseEmbedEvent, parseShareLink, shareLinkOptions } from '../../src/protocol/index.js';
import { framedViewerUrl } from '../../src/element/framed-viewer.js';

describe('an origin allowed to frame the viewer', () => {
  it('is exactly a browser-serialized https origin, or plain http on loopback', () => {
    for (const good of ['https://app.example.com', 'https://app.example.com:8443', 'https://xn--bcher-kva.example', 'http://localhost:3000', 'http://127.0.0.1:5173', 'http://app.localhost']) {
      expect(embedOriginProblem(good), good).toBeNull();
    }
    for (const bad of ['*', 'https://*.example.com', 'https://app.example.com/', 'https://app.example.com/path', 'https://app.example.com?q', 'https://u@app.example.com', 'https://APP.example.com', 'https://app.example.com:443', 'http://app.example.com', 'http://10.0.0.1', 'ftp://app.example.com', 'https://a.example.com;frame-ancestors *', 'https://a.example.com https://b.example.com', 'https://a,b.example.com', 'https://bücher.example', "'self'", 'null', '', 'x'.repeat(300)]) {
      expect(embedOriginProblem(bad), bad).not.toBeNull();
    }
  });

  it('is never an IPv6 address, which browsers ignore in frame-ancestors, saying so', () => {
    for (const ipv6 of ['http://[::1]:8080', 'https://[2001:db8::1]', 'https://[::ffff:7f00:1]:8443']) {
      expect(embedOriginProblem(ipv6), ipv6).toMatch(/browsers do not match an IPv6 address in frame-ancestors/);
    }
  });

  it("is allowed for a session only while its account allows it too", () => {
    expect(framingOrigins(['https://a.example', 'https://b.example'], null)).toEqual(['https://a.example', 'https://b.example']);
    expect(framingOrigins(['https://a.example'], ['https://a.example', 'https://b.example'])).toEqual(['https://a.example']);
    expect(framingOrigins(['https://a.example'], [])).toEqual([]);
  });
});

describe('a command from the page around the viewer', () => {
  it('is taken when it is one of version 1', () => {
    for (const command of [{ rbk: 1, type: 'hello' }, { rbk: 1, type: 'control', action: 'ask' }, { rbk: 1, type: 'tab', action: 'switch', tab: '7' }, { rbk: 1, type: 'tab', action: 'open' }, { rbk: 1, type: 'tab', action: 'open', url: 'https://example.com' }, { rbk: 1, type: 'tab', action: 'go', tab: '7', url: 'https://example.com/next' }]) {
      expect(parseEmbedCommand(command), JSON.stringify(command)).toEqual({ ok: true, command });
    }
  });

  it('is refused, naming why, when it is anything else', () => {
    const refusals: Array<[unknown, string | null, RegExp]> = [
      ['hello', null, /^not a message of this viewer/],
      [null, null, /^not a message of this viewer/],
      [{ type: 'hello' }, 'hello', /^not a message of this viewer/],
      [{ rbk: 2, type: 'hello' }, 'hello', /^rbk: version 2 is not understood/],
      [{ rbk: 1, type: 'steal' }, 'steal', /^not understood: type: /],
      [{ rbk: 1, type: 'control', action: 'give' }, 'control', /^not understood: action: /],
      [{ rbk: 1, type: 'tab', action: 'switch', tab: '' }, 'tab', /^not understood: tab: /],
      [{ rbk: 1, type: 'tab', action: 'switch', tab: 'x'.repeat(101) }, 'tab', /^not understood: tab: /],
      [{ rbk: 1, type: 'tab', action: 'open', url: 'x'.repeat(2049) }, 'tab', /^not understood: url: /],
      [{ rbk: 1, type: 'tab', action: 'go', tab: '7' }, 'tab', /^not understood: url: /],
    ];
    for (const [data, command, message] of refusals) {
      const parsed = parseEmbedCommand(data);
      expect(parsed.ok, JSON.stringify(data)).toBe(false);
      expect(parsed, JSON.stringify(data)).toMatchObject({ command, message: expect.stringMatching(message) });
    }
  });

  it("and the viewer's events read back on the page's side", () => {
    expect(parseEmbedEvent({ rbk: 1, type: 'state', state: 'running' })).toEqual({ rbk: 1, type: 'state', state: 'running' });
    expect(parseEmbedEvent({ rbk: 1, type: 'state', state: 'exploded' })).toBeNull();
    expect(parseEmbedEvent({ rbk: 1, type: 'control', mode: 'one', driver: null, you: 'p1', asking: true })).not.toBeNull();
  });
});

describe("a share link's embedder options", () => {
  const link = 'https://share.example.com/de/s?AbCdEfGhIjKlMnOpQrSt_-';
  it('follow its id after & and leave the id as it was', () => {
    expect(parseShareLink(`${link}&chrome=compact&view-only`)).toEqual({ language: 'de', linkId: 'AbCdEfGhIjKlMnOpQrSt_-' });
    // No toolbar asked for is the one row (decisions.md 180); `full` is asked for by name.
    expect(shareLinkOptions(`${link}&chrome=compact&view-only`)).toEqual({ chrome: 'compact', toolbar: 'compact', viewOnly: true });
    expect(shareLinkOptions(link)).toEqual({ chrome: 'full', toolbar: 'compact', viewOnly: false });
    expect(shareLinkOptions(`${link}&chrome=huge&toolbar=huge`)).toEqual({ chrome: 'full', toolbar: 'compact', viewOnly: false });
    expect(shareLinkOptions(`${link}&toolbar=full`)).toEqual({ chrome: 'full', toolbar: 'full', viewOnly: false });
  });

  it("are what the element's iframe asks for, on a share link only", () => {
    expect(framedViewerUrl(`${link}&chrome=full#x`, { chrome: 'compact', viewOnly: true }).href).toBe(`${link}&chrome=compact&view-only`);
    expect(framedViewerUrl(link).href).toBe(link);
    expect(framedViewerUrl(link, { toolbar: 'none', viewOnly: true }).href).toBe(`${link}&toolbar=none&view-only`);
    expect(framedViewerUrl(link, { chrome: 'compact', toolbar: 'compact' }).href).toBe(`${link}&chrome=compact&toolbar=compact`);
    expect(framedViewerUrl(link, { toolbar: 'full' }).href).toBe(`${link}&toolbar=full`);
    expect(framedViewerUrl(link, { toolbar: 'huge' as 'full' }).href).toBe(link);
    expect(framedViewerUrl(link, { language: 'ja' }).href).toBe('https://share.example.com/ja/s?AbCdEfGhIjKlMnOpQrSt_-');
    expect(framedViewerUrl('https://share.example.com/s?AbCdEfGhIjKlMnOpQrSt_-', { language: 'fr' }).href).toBe('https://share.example.com/fr/s?AbCdEfGhIjKlMnOpQrSt_-');
    expect(framedViewerUrl(link, { language: 'xx' }).href).toBe(link);
    for (const bad of ['javascript:alert(1)//s?AbCdEfGhIjKlMnOpQrSt', 'https://share.example.com/de/x?AbCdEfGhIjKlMnOpQrSt', 'https://share.example.com/de/s?short', 'not a url']) {
      expect(() => framedViewerUrl(bad), bad).toThrow();
    }
  });
});
