// The share page inside another site's iframe (issue 44, decisions.md 135): <ShareViewer>'s
// reports become the message API's events (src/protocol/embed-messages.ts) through the bridge
// (src/core/embed-bridge.ts), and the embedder's commands become the viewer's own requests: a
// control request on its `people` connection, a tab action on the share API. Nothing happens
// when the page is not framed. The root element counts ignored messages (`data-embed-ignored`).
import { EmbedBridge } from '../../../core/embed-bridge.js';
import { actOnTab, TabActionRefused } from '../../../core/share-api.js';
import type { EmbedCommand, EmbedEvent } from '../../../protocol/embed-messages.js';
import { parseShareLink, shareBaseOf, shareLinkOptions, type ViewerState } from '../../../protocol/share.js';
import type { ShareViewerProps } from '../../../react/ShareViewer.js';
import type { PeopleBinding } from '../../../react/viewer/usePeople.js';

type EmbedHooks = Required<Pick<ShareViewerProps, 'onStateChange' | 'onTabsChange' | 'onViewerState' | 'onPeople'>>;
type ControlEvent = Extract<EmbedEvent, { type: 'control' }>;

/** The viewer's hooks that speak the message API to the page around it; null when the page is not framed. */
export function embedHooks(window: Window): EmbedHooks | null {
  if (window.parent === window) return null;
  const shareBase = shareBaseOf(window.location.href);
  const linkId = parseShareLink(window.location.href)?.linkId ?? null;
  // `&view-only` watches whatever the link allows: the page's commands act on nothing either.
  const watchOnly = shareLinkOptions(window.location.href).viewOnly;
  let viewOnly = true;
  let people: PeopleBinding | null = null;
  let control = '';

  const act = async (command: Exclude<EmbedCommand, { type: 'hello' }>) => {
    if (viewOnly) throw new Error('this is a view-only link: it neither asks for control nor acts on tabs');
    if (command.type === 'control') {
      if (!people) throw new Error('control is not told for this session now (it is not running, or it started before one driver at a time)');
      people.request({ type: command.action });
      return;
    }
    if (!shareBase || !linkId) throw new Error('this page is not a share link');
    const { rbk: _rbk, type: _type, ...action } = command;
    try {
      await actOnTab({ shareBase, linkId }, action);
    } catch (error) {
      throw error instanceof TabActionRefused ? new Error(error.message) : error;
    }
  };
  const bridge = new EmbedBridge({
    window,
    onCommand: (command) => (command.type === 'hello' ? undefined : act(command)),
    onIgnored: (count) => (window.document.documentElement.dataset.embedIgnored = String(count)),
  });

  /** Sends `control` when it differs from the last one sent. */
  const tellControl = (event: Omit<ControlEvent, 'rbk' | 'type'>) => {
    const text = JSON.stringify(event);
    if (text === control) return;
    control = text;
    bridge.send({ type: 'control', ...event });
  };

  return {
    onStateChange: (state) => bridge.send({ type: 'state', state }),
    onTabsChange: (tabs) => bridge.send({ type: 'tabs', tabs }),
    onViewerState: (state: ViewerState) => {
      viewOnly = state.control === false || watchOnly;
      bridge.allow(state.frameOrigins ?? [], viewOnly);
      // Until the people connection tells more (or where it is not offered), the state's words.
      if (!people) tellControl({ mode: state.controlMode ?? 'shared', driver: state.driver ?? null, you: null, asking: false });
    },
    onPeople: (binding) => {
      people = binding;
      const picture = binding.snapshot.picture;
      if (!picture) return;
      tellControl({ mode: picture.mode, driver: picture.driver, you: picture.you, asking: picture.people.some((person) => person.id === picture.you && person.asks === true) });
    },
  };
}
