// Whether a text field has the keyboard focus in a session's browser (issue 36: a phone's viewer
// opens its on-screen keyboard when a tap lands in one). A small script runs in each page in a
// world of its own, which the page's scripts cannot see or call, and tells the engine's DevTools
// connection through a binding that exists only in that world; it reads no text, only whether the
// focused element takes typing.
import type { DevToolsConnection, DevToolsEvent } from './devtools-connection.js';

/** The isolated world the script runs in, and the binding it calls ("1": a text field has the focus, "0": none). */
export const EDITING_WORLD = 'rbk-editing';
export const EDITING_BINDING = 'rbkEditing';

/**
 * The script. A frame whose focus is in a child frame says nothing (the child's own copy says);
 * a focus that leaves is looked at once the next focus has settled (a click from one field into
 * another is a single change).
 */
export const EDITING_SCRIPT = `(() => {
  if (globalThis.__rbkEditingArmed) return;
  globalThis.__rbkEditingArmed = true;
  // The binding comes to a new document's world after the script (armEditingWatch gives it again
  // at each navigation): what is to tell waits for it, a tenth of a second at a time, up to 10 s.
  let waiting = null;
  const tell = (value, tries = 100) => {
    clearTimeout(waiting);
    const binding = globalThis[${JSON.stringify(EDITING_BINDING)}];
    if (typeof binding === 'function') binding(value);
    else if (tries > 0) waiting = setTimeout(() => tell(value, tries - 1), 100);
  };
  const NOT_TYPED = /^(button|checkbox|color|file|hidden|image|radio|range|reset|submit)$/i;
  const takesTyping = (el) => !!el && (el.isContentEditable ||
    (el.localName === 'textarea' && !el.readOnly && !el.disabled) ||
    (el.localName === 'input' && !el.readOnly && !el.disabled && !NOT_TYPED.test(el.type)));
  let last = null;
  const look = () => {
    let el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    if (el && (el.localName === 'iframe' || el.localName === 'frame')) return;
    const now = takesTyping(el);
    if (now !== last) { last = now; tell(now ? '1' : '0'); }
  };
  addEventListener('focusin', look, true);
  addEventListener('focusout', () => setTimeout(look, 0), true);
  if (document.readyState === 'loading') addEventListener('DOMContentLoaded', look, { once: true }); else look();
})();`;

/**
 * Arms the script in a page the engine's connection attached to (`sessionId`, flat mode): its
 * frames now and its later documents. The script first (it makes the world), then the binding
 * (given to the worlds of that name there are). A later document's world does not get the binding
 * by itself (that would take the Runtime domain, and every console message of the page with it):
 * `giveBinding` again when a frame navigated (Page's events are enabled here for that).
 */
export async function armEditingWatch(client: DevToolsConnection, sessionId: string): Promise<void> {
  await client.send('Page.enable', undefined, sessionId);
  await client.send('Page.addScriptToEvaluateOnNewDocument', { source: EDITING_SCRIPT, worldName: EDITING_WORLD, runImmediately: true } as never, sessionId);
  await giveBinding(client, sessionId);
}

/** Gives the binding to the page's editing worlds as they are now. */
export async function giveBinding(client: DevToolsConnection, sessionId: string): Promise<void> {
  await client.send('Runtime.addBinding', { name: EDITING_BINDING, executionContextName: EDITING_WORLD } as never, sessionId);
}

/**
 * The watch over a browser-level connection: it attaches to every tab (flat sessions), arms one
 * attachment per tab, and tells each change a tab's script reports. The control's own short
 * attachments (an evaluation, a navigation) are attachments too: one taken first is replaced by
 * another of the tab's when it ends.
 */
export class EditingWatch {
  /** Attachment (DevTools session id) to tab (target id), and the attachment armed per tab. */
  private readonly attached = new Map<string, string>();
  private readonly armed = new Map<string, string>();

  constructor(
    private readonly onChange: (tab: string, editing: boolean) => void,
    private readonly isOwnTarget: (targetId: string) => boolean,
  ) {}

  /** Every tab, now and later, attached to without pausing it. */
  async attachTabs(client: DevToolsConnection): Promise<void> {
    await client.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true, filter: [{ type: 'page' }] } as never);
  }

  /** Forgets the attachments of a connection that is gone. */
  reset(): void {
    this.attached.clear();
    this.armed.clear();
  }

  handle(client: DevToolsConnection, message: DevToolsEvent): void {
    const params = message.params as Record<string, any>;
    switch (message.method) {
      case 'Target.attachedToTarget': {
        const info = params.targetInfo as { targetId: string; type: string };
        if (info.type !== 'page' || this.isOwnTarget(info.targetId)) return;
        this.attached.set(params.sessionId, info.targetId);
        if (!this.armed.has(info.targetId)) this.arm(client, info.targetId, params.sessionId);
        return;
      }
      case 'Target.detachedFromTarget': {
        const tab = this.attached.get(params.sessionId);
        this.attached.delete(params.sessionId);
        if (!tab || this.armed.get(tab) !== params.sessionId) return;
        this.armed.delete(tab);
        const other = [...this.attached].find(([, t]) => t === tab)?.[0];
        if (other) this.arm(client, tab, other);
        return;
      }
      case 'Target.targetDestroyed':
        this.armed.delete(params.targetId);
        return;
      case 'Page.frameNavigated':
        // A new document's world gets the binding.
        if (message.sessionId && this.armedSession(message.sessionId)) void giveBinding(client, message.sessionId).catch(() => undefined);
        return;
      case 'Runtime.bindingCalled': {
        if (params.name !== EDITING_BINDING || !message.sessionId || !this.armedSession(message.sessionId)) return;
        this.onChange(this.attached.get(message.sessionId)!, params.payload === '1');
        return;
      }
    }
  }

  private armedSession(sessionId: string): boolean {
    const tab = this.attached.get(sessionId);
    return tab !== undefined && this.armed.get(tab) === sessionId;
  }

  private arm(client: DevToolsConnection, tab: string, sessionId: string): void {
    this.armed.set(tab, sessionId);
    void armEditingWatch(client, sessionId).catch(() => undefined);
  }
}
