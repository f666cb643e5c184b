// The WebDriver BiDi policy (issue 45, decisions.md 145) on its own: what passes, what is refused
// and why, how a refusal and a malformed message are worded, and what is read as a command. The
// real engine and Firefox ESR are in automation-bidi.test.ts.
import { describe, expect, it } from 'vitest';
import { bidiMalformed, bidiRefusal, judgeBiDiCommand, parseBiDiCommand } from '../../src/engine/channels/automation/bidi-policy.js';

const folders = { downloads: '/session/downloads', uploads: '/session/uploads' };
const judge = (method: string, params: Record<string, unknown> = {}) => judgeBiDiCommand({ id: 1, method, params }, folders);

describe('the BiDi policy', () => {
  it('passes what Puppeteer\'s Firefox support sends', () => {
    for (const method of ['session.new', 'session.subscribe', 'session.end', 'browser.getUserContexts', 'browser.createUserContext', 'browsingContext.getTree',
      'browsingContext.create', 'browsingContext.captureScreenshot', 'script.callFunction', 'script.addPreloadScript', 'input.performActions',
      'network.addIntercept', 'storage.getCookies', 'emulation.setGeolocationOverride', 'permissions.setPermission', 'log.entryAdded']) {
      expect(judge(method), method).toEqual({ pass: true });
    }
    expect(judge('browsingContext.navigate', { url: 'https://example.com/' })).toEqual({ pass: true });
    expect(judge('browsingContext.navigate', { url: 'about:blank' })).toEqual({ pass: true });
    expect(judge('input.setFiles', { files: ['/session/uploads/a.txt', '/session/downloads/b.pdf'] })).toEqual({ pass: true });
    expect(judge('browser.setDownloadBehavior', { downloadBehavior: { type: 'allowed', destinationFolder: '/session/downloads' } })).toEqual({ pass: true });
  });

  it('refuses what reaches outside the session, naming why', () => {
    expect(judge('browser.close')).toMatchObject({ pass: false, error: 'unsupported operation', why: expect.stringContaining('POST /v8/vm/remove') });
    expect(judge('webExtension.install')).toMatchObject({ pass: false, why: expect.stringContaining('extensions') });
    expect(judge('goog:cdp.sendCommand')).toMatchObject({ pass: false, why: expect.stringContaining('not on the list') });
    expect(judge('browser.createUserContext', { proxy: { proxyType: 'direct' } })).toMatchObject({ pass: false, error: 'invalid argument' });
    expect(judge('session.new', { capabilities: { firstMatch: [{}, { proxy: { proxyType: 'system' } }] } })).toMatchObject({ pass: false, error: 'invalid argument' });
    for (const url of ['file:///etc/passwd', 'about:config', 'about:preferences', 'about:addons', 'about:debugging', 'about:profiles', 'view-source:https://x/', 'chrome://browser/content/browser.xhtml']) {
      expect(judge('browsingContext.navigate', { url }), url).toMatchObject({ pass: false, why: expect.stringContaining('is not an address a session opens') });
    }
    expect(judge('input.setFiles', { files: ['/session/uploads/../../etc/hostname'] })).toMatchObject({ pass: false, why: expect.stringContaining('/etc/hostname') });
    expect(judge('browser.setDownloadBehavior', { downloadBehavior: { type: 'allowed', destinationFolder: '/root' } })).toMatchObject({ pass: false });
    expect(judge('network.continueRequest', { request: 'r', url: 'file:///etc/passwd' })).toMatchObject({ pass: false });
  });

  it('words a refusal and a malformed message as BiDi errors', () => {
    expect(JSON.parse(bidiRefusal({ id: 7, method: 'browser.close' }, 'unsupported operation', 'why'))).toEqual({
      type: 'error', id: 7, error: 'unsupported operation', message: 'browser.close is refused in remote-browser-kit sessions: why',
    });
    expect(JSON.parse(bidiMalformed('{"id": 3, "method": 5}'))).toMatchObject({ type: 'error', id: 3, error: 'invalid argument' });
    expect(JSON.parse(bidiMalformed('nonsense'))).toMatchObject({ type: 'error', id: null });
  });

  it('reads only well-formed commands', () => {
    expect(parseBiDiCommand('{"id":1,"method":"session.status","params":{}}')).toEqual({ id: 1, method: 'session.status', params: {} });
    expect(parseBiDiCommand('{"id":1,"method":"remoteBrowserKit:control.get"}')).toMatchObject({ method: 'remoteBrowserKit:control.get' });
    for (const text of ['', 'null', '[]', '{"id":-1,"method":"a.b"}', '{"id":1.5,"method":"a.b"}', '{"id":1,"method":"nodot"}', '{"id":1,"method":"a.b","params":[]}']) {
      expect(parseBiDiCommand(text), text).toBeUndefined();
    }
  });

  it('reads no command nested deeper than MESSAGE_DEPTH, and answers it with its id, found without reading it (issue 53)', () => {
    const deep = `{"id":12,"method":"script.evaluate","params":{"arguments":${'['.repeat(500_000)}${']'.repeat(500_000)}}}`;
    expect(parseBiDiCommand(deep)).toBeUndefined();
    expect(JSON.parse(bidiMalformed(deep))).toEqual({ type: 'error', id: 12, error: 'invalid argument', message: expect.stringContaining('a message nested deeper than 512 levels') });
    // Cut short and too deep: no JSON at all, its id still found.
    expect(JSON.parse(bidiMalformed(`{"id":13,"method":"a.b","params":${'{"a":'.repeat(600)}`))).toMatchObject({ id: 13 });
    // One at the limit is read.
    expect(parseBiDiCommand(`{"id":1,"method":"a.b","params":{"v":${'['.repeat(510)}${']'.repeat(510)}}}`)).toMatchObject({ id: 1 });
    // An id inside params is not the message's.
    expect(JSON.parse(bidiMalformed(`{"method":"a.b","params":{"id":5,"v":${'['.repeat(600)}}}`))).toMatchObject({ id: null });
  });
});
