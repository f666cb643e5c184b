// Whether a text field has the keyboard focus in a session's browser (issue 36: a phone's viewer
// opens its on-screen keyboard when a tap lands in one). A small script runs in each page in a
// world of its own, which the page's scripts cannot see or call, and tells the engine's DevTools
// connection through a binding that exists only in that world; it reads no text, only whether the
// focused element takes typing.
import type CDP from 'chrome-remote-interface';

/** The isolated world the script runs in, and the binding it calls ("1": a text field has the focus, "0": none). */
export const EDITING_WORLD = 'rbk-editing';
export const EDITING_BINDING = 'rbkEditing';

/**
 * The script. A frame whose focus is in a child frame says nothing (the child's own copy says);
 * a focus that leaves is looked at once the next focus has settled (a click from one field into
 * another is a single change).
 */
export const EDITING_SCRIPT = `(() => {
  const tell = globalThis[${JSON.stringify(EDITING_BINDING)}];
  if (typeof tell !== 'function' || globalThis.__rbkEditingArmed) return;
  globalThis.__rbkEditingArmed = true;
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

/** Arms the script in a page the engine's connection attached to (`sessionId`, flat mode): its frames now and its later documents. */
export async function armEditingWatch(client: CDP.Client, sessionId: string): Promise<void> {
  await client.send('Runtime.addBinding', { name: EDITING_BINDING, executionContextName: EDITING_WORLD } as never, sessionId);
  await client.send('Page.addScriptToEvaluateOnNewDocument', { source: EDITING_SCRIPT, worldName: EDITING_WORLD, runImmediately: true } as never, sessionId);
}
