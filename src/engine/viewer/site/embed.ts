// The share page inside another site's iframe (issue 44, decisions.md 135 and 152): <ShareViewer>'s
// reports become the message API's events (src/protocol/embed-messages.ts) through the bridge
// (src/core/embed-bridge.ts), and the embedder's commands become the viewer's own requests: a
// control request on its `people` connection, a tab action on the share API, the live screen's
// sound, focus and full screen, and Leave. Nothing happens when the page is not framed. The root
// element counts ignored messages (`data-embed-ignored`).
import { EmbedBridge } from '../../../core/embed-bridge.js';
import { followSessionFiles } from '../../../core/session-files.js';
import { actOnTab, TabActionRefused } from '../../../core/share-api.js';
import type { EmbedCommand, EmbedEvent, WithoutVersion } from '../../../protocol/embed-messages.js';
import type { Person } from '../../../protocol/control.js';
import { isWebAddress, parseShareLink, shareBaseOf, shareLinkOptions, type ViewerState } from '../../../protocol/share.js';
import type { ShareViewerProps } from '../../../react/ShareViewer.js';
import type { PeopleBinding } from '../../../react/viewer/usePeople.js';
import type { RemoteSound } from '../../../react/viewer/useRemoteSound.js';

type EmbedHooks = Required<Pick<ShareViewerProps, 'onStateChange' | 'onTabsChange' | 'onViewerState' | 'onPeople' | 'onSound' | 'onLeave'>>;

export interface EmbedHookOptions {
  /** Closes the viewer (unmounts it: every connection ends) when it leaves. */
  close: () => void;
  /** Follows the session's files (a stand-in in tests); answers the way to stop. */
  followFiles?: typeof followSessionFiles;
}

/** What each person looks like in `people`, `joined` and `left`: the engine's fields, nothing more. */
function personOf(person: Person): Person {
  const { id, kind, name, guest, owner, watching, asks } = person;
  return { id, kind, ...(name !== undefined ? { name } : {}), ...(guest !== undefined ? { guest } : {}), ...(owner ? { owner } : {}), ...(watching ? { watching } : {}), ...(asks ? { asks } : {}) };
}

/** The viewer's hooks that speak the message API to the page around it; null when the page is not framed. */
export function embedHooks(window: Window, options: EmbedHookOptions): EmbedHooks | null {
  if (window.parent === window) return null;
  const shareBase = shareBaseOf(window.location.href);
  const linkId = parseShareLink(window.location.href)?.linkId ?? null;
  const followFiles = options.followFiles ?? followSessionFiles;
  // `&view-only` watches whatever the link allows: the page's commands act on nothing either.
  const watchOnly = shareLinkOptions(window.location.href).viewOnly;
  let viewOnly = true;
  let people: PeopleBinding | null = null;
  let sound: RemoteSound | null = null;
  let present: Map<string, Person> | null = null;
  let leaveUrl: string | null = shareBase ? `${shareBase}/` : null;
  let running = false;
  let stopFiles: (() => void) | null = null;
  let closed = false;
  /** The last event of each kind sent, as text: an event goes only when it says something new. */
  const told = new Map<string, string>();

  const document = window.document;
  const act = async (command: Exclude<EmbedCommand, { type: 'hello' }>) => {
    if (closed) throw new Error('the viewer has left: make a new frame to watch again');
    switch (command.type) {
      case 'sound':
        if (!sound || sound.available !== 'yes') throw new Error(sound?.available === 'no-webcodecs' ? 'this browser cannot play the session\'s sound' : 'the session has no sound (or it is not running)');
        if (command.muted !== undefined) sound.setMuted(command.muted);
        if (command.volume !== undefined) sound.setVolume(command.volume);
        return;
      case 'focus': {
        const input = document.querySelector<HTMLElement>('.rbk-viewer__keyboard-input');
        if (!input) throw new Error(viewOnly ? 'this viewer only watches: it takes no keys' : 'the session is not running yet');
        window.focus();
        input.focus({ preventScroll: true });
        return;
      }
      case 'fullscreen': {
        if (!command.on) {
          if (document.fullscreenElement) await document.exitFullscreen();
          return;
        }
        const live = document.querySelector<HTMLElement>('.rbk-viewer__live');
        if (!running || !live) throw new Error('the session is not running: nothing to show in full screen yet');
        try {
          await live.requestFullscreen();
        } catch {
          throw new Error('the browser refused full screen: it allows it after a press in the frame, or call requestFullscreen() on the iframe from your page');
        }
        return;
      }
      case 'leave':
        leave(leaveUrl);
        return;
    }
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
    onIgnored: (count) => (document.documentElement.dataset.embedIgnored = String(count)),
  });

  /** Sends an event when it differs from the last one of its kind. */
  const tell = (event: WithoutVersion<EmbedEvent>) => {
    const text = JSON.stringify(event);
    if (told.get(event.type) === text) return;
    told.set(event.type, text);
    bridge.send(event);
  };

  /** The downloads that finish while the viewer watches, for a link that controls (only it is offered files). */
  const watchFiles = () => {
    if (stopFiles || viewOnly || !running || closed || !shareBase || !linkId) return;
    let known: Set<string> | null = null;
    stopFiles = followFiles(shareBase, linkId, (message) => {
      const complete = message.files.filter((file) => file.kind === 'download' && file.state === 'complete');
      // The first list is what was there already: not news.
      if (known) for (const file of complete) if (!known.has(`${file.name}\0${file.created}`)) bridge.send({ type: 'download', name: file.name, size: file.size, created: file.created });
      known = new Set(complete.map((file) => `${file.name}\0${file.created}`));
    });
  };
  const unwatchFiles = () => {
    stopFiles?.();
    stopFiles = null;
  };

  const leave = (url: string | null) => {
    if (closed) return;
    closed = true;
    unwatchFiles();
    options.close();
    bridge.send({ type: 'closed', leaveUrl: url });
  };

  return {
    onStateChange: (state) => {
      bridge.send({ type: 'state', state });
      running = state === 'running';
      if (running) watchFiles();
      else unwatchFiles();
    },
    onTabsChange: (tabs) => bridge.send({ type: 'tabs', tabs }),
    onViewerState: (state: ViewerState) => {
      viewOnly = state.control === false || watchOnly;
      leaveUrl = (state.leaveUrl && isWebAddress(state.leaveUrl) ? state.leaveUrl : null) ?? (shareBase ? `${shareBase}/` : null);
      bridge.allow(state.frameOrigins ?? [], viewOnly);
      tell({ type: 'recording', recording: state.recording === true });
      // Until the people connection tells more (or where it is not offered), the state's words.
      if (!people) tell({ type: 'control', mode: state.controlMode ?? 'shared', driver: state.driver ?? null, you: null, asking: false });
      watchFiles();
    },
    onPeople: (binding) => {
      people = binding;
      const picture = binding.snapshot.picture;
      if (!picture) return;
      tell({ type: 'control', mode: picture.mode, driver: picture.driver, you: picture.you, asking: picture.people.some((person) => person.id === picture.you && person.asks === true) });
      const now = new Map(picture.people.map((person) => [person.id, personOf(person)]));
      tell({ type: 'people', people: [...now.values()], you: picture.you });
      if (present) {
        for (const [id, person] of now) if (!present.has(id)) bridge.send({ type: 'joined', person });
        for (const [id, person] of present) if (!now.has(id)) bridge.send({ type: 'left', person });
      }
      present = now;
    },
    onSound: (binding) => {
      sound = binding;
      tell({ type: 'sound', available: binding.available, muted: binding.muted, volume: binding.volume, blocked: binding.blocked });
    },
    onLeave: (url) => leave(url),
  };
}
