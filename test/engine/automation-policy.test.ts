// The automation policy and tokens without a browser: what a program's DevTools commands become
// (passed, re-pointed or refused with a reason), what of the browser's answers a program sees
// (never the engine's own connection), and which tokens open which session.
import { describe, expect, it } from 'vitest';
import { EngineTargetView } from '../../src/engine/channels/automation/engine-targets.js';
import { judgeCommand, parseCommand, refusal } from '../../src/engine/channels/automation/policy.js';
import { automationToken, checkAutomationToken } from '../../src/engine/channels/automation/tokens.js';

const folders = { downloads: '/session/downloads', uploads: '/session/uploads' };
const judge = (method: string, params?: Record<string, unknown>) => judgeCommand({ id: 1, method, ...(params ? { params } : {}) }, folders);

describe('the automation policy', () => {
  it('passes what a page-level client sends', () => {
    for (const method of ['Page.enable', 'Runtime.evaluate', 'Input.dispatchMouseEvent', 'Target.getBrowserContexts', 'Browser.getVersion', 'Storage.getCookies']) {
      expect(judge(method).pass).toBe(true);
    }
    expect(judge('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }).pass).toBe(true);
    expect(judge('Page.navigate', { url: 'https://example.com/' }).pass).toBe(true);
    expect(judge('Target.createTarget', { url: 'about:blank' }).pass).toBe(true);
    expect(judge('DOM.setFileInputFiles', { files: ['/session/uploads/a.pdf', '/session/downloads/b.png'] }).pass).toBe(true);
  });

  it('re-points Playwright\'s own temporary download folder into the session, and refuses any other outside path', () => {
    const verdict = judge('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: '/tmp/playwright-artifacts-AbC123', eventsEnabled: true });
    expect(verdict).toEqual({ pass: true, command: { id: 1, method: 'Browser.setDownloadBehavior', params: { behavior: 'allowAndName', downloadPath: '/session/downloads', eventsEnabled: true } } });
    expect(judge('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: '/home/user' }).pass).toBe(false);
    expect(judge('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: '/session/downloads/../x' }).pass).toBe(false);
    expect(judge('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: 'relative' }).pass).toBe(false);
  });

  it('refuses what reaches outside the session, naming why', () => {
    const refused: Array<[string, Record<string, unknown>?]> = [
      ['Browser.close'], ['Browser.crash'], ['Browser.crashGpuProcess'], ['SystemInfo.getInfo'], ['Tethering.bind', { port: 1 }],
      ['Target.createBrowserContext', { proxyServer: 'socks5://x' }], ['Target.sendMessageToTarget'], ['Target.exposeDevToolsProtocol'],
      ['Target.attachToTarget', { targetId: 't' }], ['Target.setAutoAttach', { autoAttach: true, flatten: false }],
      ['DOM.setFileInputFiles', { files: ['/etc/shadow'] }], ['Page.navigate', { url: 'file:///etc/passwd' }],
      ['Page.navigate', { url: 'chrome://settings' }], ['Target.createTarget', { url: 'view-source:https://a' }],
      ['Fetch.continueRequest', { requestId: 'r', url: 'file:///etc/passwd' }], ['Network.loadNetworkResource', { url: 'file:///etc' }],
      ['Unknown.method'], ['Memory.simulatePressureNotification'], ['Tracing.start'], ['Tracing.requestMemoryDump'],
    ];
    for (const [method, params] of refused) expect(judge(method, params), method).toMatchObject({ pass: false, why: expect.any(String) });
    expect(judge('Page.navigate', { url: 'chrome://newtab/' }).pass).toBe(true);
  });

  it('lets a drag carry only files the session\'s own folders hold, by the file chooser\'s rule', () => {
    const drag = (files?: unknown) => judge('Input.dispatchDragEvent', { type: 'drop', x: 5, y: 5, data: { items: [], dragOperationsMask: 1, ...(files === undefined ? {} : { files }) } });
    expect(drag(['/session/uploads/a.pdf', '/session/downloads/b.png']).pass).toBe(true);
    // A drag of text or links carries no files.
    expect(drag().pass).toBe(true);
    expect(judge('Input.dispatchDragEvent', { type: 'dragEnter', x: 5, y: 5, data: { items: [{ mimeType: 'text/plain', data: 'hi' }], dragOperationsMask: 1 } }).pass).toBe(true);
    for (const files of [['/etc/hostname'], ['/session/uploads/a.pdf', '/session/.Xauthority'], ['/session/uploads/../profile/Local State'], ['uploads/a.pdf'], [7]]) {
      expect(drag(files), JSON.stringify(files)).toMatchObject({ pass: false, why: expect.stringContaining('a drag carries files from the session\'s folders /session/downloads and /session/uploads only') });
    }
    // The same paths, as a file chooser's answer: one rule for both.
    expect(judge('DOM.setFileInputFiles', { files: ['/session/uploads/../profile/Local State'] }).pass).toBe(false);
  });

  it('words a refusal as a DevTools error on the caller\'s session', () => {
    expect(JSON.parse(refusal({ id: 7, method: 'Browser.close', sessionId: 'S' }, 'why'))).toEqual({
      id: 7, sessionId: 'S', error: { code: -32000, message: 'Browser.close is not allowed in remote-browser-kit sessions: why' },
    });
  });

  it('reads only well-formed commands', () => {
    expect(parseCommand('{"id":1,"method":"Page.enable"}')).toEqual({ id: 1, method: 'Page.enable' });
    for (const text of ['nope', '[]', '{"id":"1","method":"Page.enable"}', '{"id":1,"method":"x"}', '{"id":1,"method":"A.b","params":[]}', '{"id":1,"method":"A.b","sessionId":3}']) {
      expect(parseCommand(text), text).toBeUndefined();
    }
  });

  it('reads no command nested deeper than MESSAGE_DEPTH, nor one over the size a program sends (issue 53)', () => {
    expect(parseCommand(`{"id":1,"method":"Runtime.callFunctionOn","params":{"arguments":${'['.repeat(500_000)}${']'.repeat(500_000)}}}`)).toBeUndefined();
    expect(parseCommand(`{"id":1,"method":"Runtime.evaluate","params":{"expression":"${'x'.repeat(1024 * 1024)}"}}`)).toBeUndefined();
    expect(parseCommand(`{"id":1,"method":"Runtime.evaluate","params":{"v":${'['.repeat(510)}${']'.repeat(510)}}}`)).toMatchObject({ id: 1 });
  });
});

describe('the engine\'s own DevTools connection', () => {
  const GUARD = 'guard-0000-target';
  const info = (targetId: string, type = 'browser') => ({ targetId, type, title: '', url: '', attached: true });

  it('is refused by name in any command', () => {
    const verdict = judgeCommand({ id: 1, method: 'Target.attachToTarget', params: { targetId: GUARD, flatten: true } }, folders, (id) => id === GUARD);
    expect(verdict).toMatchObject({ pass: false, why: expect.stringContaining('the engine\'s own DevTools connection') });
    expect(judgeCommand({ id: 1, method: 'Target.attachToTarget', params: { targetId: 'PAGE', flatten: true } }, folders, (id) => id === GUARD).pass).toBe(true);
  });

  it('is left out of listings and target events; what auto-attach attached to it is detached at once and closed to the program', () => {
    const view = new EngineTargetView((id) => id === GUARD);
    view.sent({ id: 3, method: 'Target.getTargets', sessionId: 'B' });
    const listing = view.fromBrowser(JSON.stringify({ id: 3, result: { targetInfos: [info('PAGE', 'page'), info(GUARD)] }, sessionId: 'B' }));
    expect(JSON.parse(listing.text!)).toEqual({ id: 3, result: { targetInfos: [info('PAGE', 'page')] }, sessionId: 'B' });
    expect(view.fromBrowser(JSON.stringify({ method: 'Target.targetCreated', params: { targetInfo: info(GUARD) } })).text).toBeNull();
    expect(view.fromBrowser(JSON.stringify({ method: 'Target.targetDestroyed', params: { targetId: GUARD } })).text).toBeNull();
    const created = JSON.stringify({ method: 'Target.targetCreated', params: { targetInfo: info('PAGE', 'page') } });
    expect(view.fromBrowser(created).text).toBe(created);
    const attached = view.fromBrowser(JSON.stringify({ method: 'Target.attachedToTarget', params: { sessionId: 'S', targetInfo: info(GUARD), waitingForDebugger: false } }));
    expect(attached.text).toBeNull();
    const [detach] = attached.toBrowser.map((text) => JSON.parse(text));
    expect(detach).toMatchObject({ method: 'Target.detachFromTarget', params: { sessionId: 'S' } });
    expect(detach.id).toBeGreaterThanOrEqual(2_000_000_000);
    // The answer to the view's own detach never reaches the program; its commands to that session are refused.
    expect(view.fromBrowser(JSON.stringify({ id: detach.id, result: {} })).text).toBeNull();
    expect(view.refuses({ id: 9, method: 'Fetch.disable', sessionId: 'S' })).toBe(true);
    expect(view.refuses({ id: 9, method: 'Fetch.disable', sessionId: 'T' })).toBe(false);
    // Everything else passes as it came, unread.
    const answer = '{"id":4,"result":{"data":"iVBORw0KGgo="}}';
    expect(view.fromBrowser(answer)).toEqual({ text: answer, toBrowser: [] });
  });
});

describe('automation tokens', () => {
  const secret = 's'.repeat(43);
  const id = 'ab'.repeat(16);
  it('open their own session until they expire, and nothing else', () => {
    const token = automationToken(secret, id, 10_000);
    expect(checkAutomationToken(secret, token, 9_999)).toEqual({ ok: true, sessionId: id, expires: 10_000 });
    expect(checkAutomationToken(secret, token, 10_000)).toEqual({ ok: false, reason: 'expired' });
    expect(checkAutomationToken(secret, token.replace(id, 'cd'.repeat(16)), 0)).toEqual({ ok: false, reason: 'forged' });
    expect(checkAutomationToken(secret, token.replace('.10000.', '.99999.'), 0)).toEqual({ ok: false, reason: 'forged' });
    expect(checkAutomationToken('other'.repeat(9), token, 0)).toEqual({ ok: false, reason: 'forged' });
    expect(checkAutomationToken(secret, 'x', 0)).toEqual({ ok: false, reason: 'malformed' });
  });
});

describe('the automation address of a Firefox ESR session', () => {
  it('is a WebDriver BiDi address, never a DevTools one, for a session created with automation: true', async () => {
    const { createAutomation } = await import('../../src/engine/http/automation.js');
    const row = { id: 'ab'.repeat(16), account_id: 'acc', status: 'running', browser: 'firefox-esr', browser_name: 'Firefox ESR', automation: true };
    const automation = createAutomation({
      session: async () => row as never,
      image: () => ({ family: 'firefox' }) as never,
      secret: 's'.repeat(43), tokenSeconds: 600, now: () => 0, base: () => 'http://x', router: {} as never, clientAddress: () => '',
    });
    expect(await automation.address({ id: 'acc' } as never, row.id, 'v8')).toEqual({
      status: 'ok',
      webDriverBiDiEndpoint: expect.stringMatching(new RegExp(`^ws://x/automation/${row.id}\\.600000\\.`)),
      expires: new Date(600_000).toISOString(),
    });
  });

  it('is denied, naming the field, for a session created without automation: true (its Firefox runs no remote agent)', async () => {
    const { createAutomation } = await import('../../src/engine/http/automation.js');
    const row = { id: 'ab'.repeat(16), account_id: 'acc', status: 'running', browser: 'firefox-esr', browser_name: 'Firefox ESR', automation: false };
    const automation = createAutomation({
      session: async () => row as never,
      image: () => ({ family: 'firefox' }) as never,
      secret: 's'.repeat(43), tokenSeconds: 600, now: () => 0, base: () => 'http://x', router: {} as never, clientAddress: () => '',
    });
    expect(await automation.address({ id: 'acc' } as never, row.id, 'v8')).toEqual({
      status: 'denied',
      message: expect.stringContaining('create the session with automation: true'),
    });
  });

  it('answers a WebDriver BiDi address for a Firefox app window created for programs, whose one BiDi session programs share with the tab watcher (decisions.md 171)', async () => {
    const { createAutomation } = await import('../../src/engine/http/automation.js');
    const row = { id: 'ab'.repeat(16), account_id: 'acc', status: 'running', browser: 'firefox-esr', browser_name: 'Firefox ESR', automation: true, app_window: true };
    const automation = createAutomation({
      session: async () => row as never,
      image: () => ({ family: 'firefox' }) as never,
      secret: 's'.repeat(43), tokenSeconds: 600, now: () => 0, base: () => 'http://x', router: {} as never, clientAddress: () => '',
    });
    expect(await automation.address({ id: 'acc' } as never, row.id, 'v8')).toMatchObject({ status: 'ok', webDriverBiDiEndpoint: expect.stringMatching(/^ws:\/\/x\/automation\//) });
  });
});
