// Security suite, the viewer: what the share API says (the browser's name, where Leave goes) is
// shown as text and never inserted as HTML, and Leave never follows a script address
// (javascript:, data:, vbscript:), even when a stored session carries one that the API's own
// checks would have refused. <ShareViewer> against the real engine's share API; the hostile
// values are written into the engine's store, as a tampered or older database would hold them.
import { render, screen } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { FakeRuntime } from '../helpers/fake-runtime.js';
import { insertLinkedSession } from '../helpers/linked-session.js';
import { resources } from '../../src/react/i18n.js';
import { ShareViewer } from '../../src/react/ShareViewer.js';

const MARKUP = '<img src=x onerror="window.__rbkInjected = true"><b>Chromium</b>';
const SCRIPT_ADDRESSES = [
  'javascript:window.__rbkInjected = true',
  'JavaScript:window.__rbkInjected = true',
  ' \tjavascript:window.__rbkInjected = true',
  'java\nscript:window.__rbkInjected = true',
  'data:text/html,<script>window.__rbkInjected = true</script>',
  'vbscript:msgbox(1)',
];
const text = resources.en.viewer;

let fixture: EngineFixture<FakeRuntime>;
let engine: Engine<FakeRuntime>;
let accountId: string;
let subscriptionId: string;

/** A session row as a tampered store could hold it, and its share link. */
function hostileLink(status: string, browserName: string, callbackUrl: string | null): Promise<string> {
  return insertLinkedSession(engine, { accountId, subscriptionId }, { status, browser_name: browserName, callback_url: callbackUrl });
}

/** Nothing in the rendered viewer is markup from the service, or an address that runs script. */
function expectNoInjection(container: HTMLElement): void {
  expect(container.querySelector('img, b, script, iframe, object, embed')).toBeNull();
  for (const element of container.querySelectorAll('*')) {
    for (const attribute of ['href', 'src', 'action', 'formaction', 'srcdoc']) {
      expect(element.getAttribute(attribute) ?? '', `${element.tagName} ${attribute}`).not.toMatch(/^\s*(javascript|data|vbscript):/i);
    }
    for (const { name } of element.attributes) expect(name, element.tagName).not.toMatch(/^on/i);
  }
  expect((window as { __rbkInjected?: boolean }).__rbkInjected).toBeUndefined();
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'viewer-hostile', runtime: 'fake' });
  engine = fixture.engine;
  ({ id: accountId, subscriptionId } = fixture.account);
});

afterAll(async () => {
  await fixture?.close();
});

describe('<ShareViewer> with hostile values from the share API', () => {
  it('shows a browser name that is markup as text on the waiting screen', async () => {
    const { container } = render(<ShareViewer shareUrl={await hostileLink('starting', MARKUP, null)} />);
    expect(await screen.findByRole('heading', { name: text.waiting.title })).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent(text.waiting.status.replace('{{browser}}', MARKUP));
    expectNoInjection(container);
  });

  it('shows a browser name that is markup as text on the live screen', async () => {
    const { container } = render(<ShareViewer shareUrl={await hostileLink('running', MARKUP, null)} />);
    expect(await screen.findByRole('application', { name: text.running.region.replace('{{browser}}', MARKUP) })).toBeInTheDocument();
    expectNoInjection(container);
  });

  it.each(SCRIPT_ADDRESSES)('Leave never goes to the script address %j: it goes to the launch page', async (callbackUrl) => {
    const onLeave = vi.fn();
    const { container } = render(<ShareViewer shareUrl={await hostileLink('suspended', MARKUP, callbackUrl)} onLeave={onLeave} />);
    expect(await screen.findByRole('heading', { name: text.ended.title })).toBeInTheDocument();
    // Leave is a button, not a link that could carry the address.
    expect(screen.queryAllByRole('link')).toEqual([]);
    await userEvent.click(screen.getByRole('button', { name: text.leave }));
    expect(onLeave.mock.calls).toEqual([[`${engine.url}/`]]);
    expectNoInjection(container);
  });

  it('Leave from the live screen goes to the launch page too, not to a script address', async () => {
    const onLeave = vi.fn();
    render(<ShareViewer shareUrl={await hostileLink('running', 'Chromium', 'javascript:window.__rbkInjected = true')} onLeave={onLeave} />);
    await screen.findByRole('application');
    await userEvent.click(screen.getByRole('button', { name: text.leave }));
    expect(onLeave.mock.calls).toEqual([[`${engine.url}/`]]);
  });

  it('still leaves to a web address the session was given', async () => {
    const onLeave = vi.fn();
    render(<ShareViewer shareUrl={await hostileLink('suspended', 'Chromium', 'https://app.example.com/done?from=<b>x</b>')} onLeave={onLeave} />);
    await userEvent.click(await screen.findByRole('button', { name: text.leave }));
    expect(onLeave.mock.calls).toEqual([['https://app.example.com/done?from=<b>x</b>']]);
  });
});

describe('the components and pages a viewer sees', () => {
  it('insert no string as HTML anywhere in their source', async () => {
    const roots = ['src/react', 'src/engine/viewer/site', 'src/demo/page'];
    const found: string[] = [];
    for (const root of roots) {
      for (const name of await readdir(root, { recursive: true })) {
        if (!/\.(tsx?|html)$/.test(name)) continue;
        const source = await readFile(join(root, name), 'utf8');
        for (const sink of ['dangerouslySetInnerHTML', 'innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'createContextualFragment', 'srcdoc']) {
          if (source.includes(sink)) found.push(`${root}/${name}: ${sink}`);
        }
      }
    }
    expect(found).toEqual([]);
  });
});
