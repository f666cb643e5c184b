// <remote-browser-viewer src="<share link>">: the share link's viewer in any page, with no
// framework (issue 44, decisions.md 136). It holds the framed viewer (framed-viewer.ts) in a
// shadow root and sends the message API's events as DOM events named `rbk-<type>` (`rbk-ready`,
// `rbk-state`, `rbk-tabs`, `rbk-control`, `rbk-people`, `rbk-joined`, `rbk-left`, `rbk-download`,
// `rbk-recording`, `rbk-sound`, `rbk-closed`, `rbk-error`) whose `detail` is the message itself;
// its methods are the commands. Attributes: `src`, `chrome` (`compact`), `toolbar` (`compact`, the
// default, `full` or `none`), `view-only`, `title`,
// `language` (the viewer's, instead of the link's). Full screen is the element's own
// `requestFullscreen()`, from a press's handler.
// Styled from outside with `::part(frame)` and the custom properties --rbk-viewer-border,
// --rbk-viewer-radius and --rbk-viewer-background. Defined only in a browser (SSR imports it safely).
import type { EmbedEvent } from '../protocol/embed-messages.js';
import { viewerToolbarChoice } from '../protocol/share.js';
import { FramedViewer } from './framed-viewer.js';

export const ELEMENT_NAME = 'remote-browser-viewer';

const STYLE = `:host{display:block;position:relative;min-height:240px;background:var(--rbk-viewer-background,transparent);border:var(--rbk-viewer-border,0);border-radius:var(--rbk-viewer-radius,0);overflow:hidden}
:host([hidden]){display:none}
iframe{border:0;display:block;width:100%;height:100%;position:absolute;inset:0}
p{margin:0;padding:1em;font:inherit;color:inherit}`;

/** The element's class, made when first asked for (HTMLElement exists only in a browser). */
function elementClass(): CustomElementConstructor {
  return class RemoteBrowserViewerElement extends HTMLElement {
    static observedAttributes = ['src', 'chrome', 'toolbar', 'view-only', 'title', 'language'];
    #viewer: FramedViewer | null = null;
    #shown = '';

    connectedCallback(): void {
      if (!this.shadowRoot) {
        const root = this.attachShadow({ mode: 'open' });
        const style = document.createElement('style');
        style.textContent = STYLE;
        root.append(style);
      }
      this.#load();
    }

    disconnectedCallback(): void {
      this.#viewer?.destroy();
      this.#viewer = null;
      this.#shown = '';
    }

    attributeChangedCallback(): void {
      // An element already in the page when the script defines it hears its attributes before
      // connectedCallback: the shadow root (and the first load) come there.
      if (this.isConnected && this.shadowRoot) this.#load();
    }

    /** The framed viewer (its iframe and commands); null while `src` is not a share link. */
    get viewer(): FramedViewer | null {
      return this.#viewer;
    }

    switchTab(tab: string): void {
      this.#viewer?.switchTab(tab);
    }

    closeTab(tab: string): void {
      this.#viewer?.closeTab(tab);
    }

    openTab(url?: string): void {
      this.#viewer?.openTab(url);
    }

    goTab(tab: string, url: string): void {
      this.#viewer?.goTab(tab, url);
    }

    requestControl(): void {
      this.#viewer?.control('ask');
    }

    cancelControlRequest(): void {
      this.#viewer?.control('cancel');
    }

    releaseControl(): void {
      this.#viewer?.control('release');
    }

    takeControl(): void {
      this.#viewer?.control('take');
    }

    focus(): void {
      if (this.#viewer) this.#viewer.focus();
      else super.focus();
    }

    mute(): void {
      this.#viewer?.mute();
    }

    unmute(): void {
      this.#viewer?.unmute();
    }

    setVolume(volume: number): void {
      this.#viewer?.setVolume(volume);
    }

    leave(): void {
      this.#viewer?.leave();
    }

    #load(): void {
      const src = this.getAttribute('src') ?? '';
      const options = { chrome: this.getAttribute('chrome') === 'compact' ? 'compact' as const : 'full' as const, toolbar: viewerToolbarChoice(this.getAttribute('toolbar')), viewOnly: this.hasAttribute('view-only'), title: this.getAttribute('title') ?? 'Remote browser', language: this.getAttribute('language') ?? '' };
      const wanted = JSON.stringify([src, options]);
      if (wanted === this.#shown) return;
      this.#shown = wanted;
      this.#viewer?.destroy();
      this.#viewer = null;
      this.shadowRoot!.querySelector('p')?.remove();
      try {
        this.#viewer = new FramedViewer(src, options, this.ownerDocument);
      } catch (error) {
        const message = document.createElement('p');
        message.setAttribute('part', 'message');
        message.setAttribute('role', 'alert');
        message.textContent = src === '' ? 'No share link: set the src attribute.' : (error as Error).message;
        this.shadowRoot!.append(message);
        return;
      }
      this.#viewer.iframe.setAttribute('part', 'frame');
      this.#viewer.listen((event: EmbedEvent) => this.dispatchEvent(new CustomEvent(`rbk-${event.type}`, { detail: event, bubbles: true, composed: true })));
      this.shadowRoot!.append(this.#viewer.iframe);
    }
  };
}

/** Defines `<remote-browser-viewer>` (or `name`) once; does nothing outside a browser. */
export function defineRemoteBrowserViewer(name: string = ELEMENT_NAME): void {
  if (typeof customElements === 'undefined' || customElements.get(name)) return;
  customElements.define(name, elementClass());
}
