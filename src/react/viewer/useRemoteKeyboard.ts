// The viewer's keyboard on the remote browser: the handlers of the viewer's own text input (keys,
// typed and composed text, pastes), the on-screen keyboard's sticky Ctrl and Alt, and pasting
// text there. What goes as which keysym is src/core/keyboard.ts; this only wires it to the DOM.
import { useCallback, useRef, useState, type ClipboardEvent, type CompositionEvent, type FormEvent, type KeyboardEvent, type RefObject } from 'react';
import { createLeaveEscapeWatcher, inputDelivery, isComposing, keysymForKeyDown, PASTE_STROKES, pressWith, textDelivery, type KeyFacts, type KeyStroke, type StickyModifier } from '../../core/keyboard.js';
import type { RemoteScreen } from './remote-screen.js';

export type StickyModifiers = Record<StickyModifier, boolean>;
const NONE_HELD: StickyModifiers = { Control: false, Alt: false };

export function useRemoteKeyboard({ remote, keyboardRef, onLeaveKeys }: { remote: () => RemoteScreen | null; keyboardRef: RefObject<HTMLTextAreaElement | null>; onLeaveKeys: () => void }) {
  const [modifiers, setModifiers] = useState<StickyModifiers>(NONE_HELD);
  /** Keys sent down at keydown (shortcuts, keys that type no text), by DOM code, for their keyup. */
  const keysDown = useRef(new Map<string, number>());
  const [leaveEscape] = useState(() => createLeaveEscapeWatcher());

  /**
   * A key event as a plain X keysym (no scan code: the remote layout decides which key makes it);
   * without `down`, a press and a release.
   */
  const send = useCallback((...[keysym, down]: KeyStroke) => remote()?.sendKey(keysym, null, down), [remote]);

  /** Presses a key, with the sticky Ctrl/Alt of the on-screen keyboard held around it. */
  const press = useCallback(
    (keysym: number) => {
      if (!remote()) return;
      const held = (Object.keys(modifiers) as StickyModifier[]).filter((m) => modifiers[m]);
      for (const stroke of pressWith(keysym, held)) send(...stroke);
      if (held.length) setModifiers(NONE_HELD);
    },
    [modifiers, remote, send],
  );

  /** Sets the remote clipboard and presses Ctrl+V there: any text, exactly (the extended clipboard carries UTF-8). */
  const pasteIntoRemote = useCallback(
    (text: string) => {
      const screen = remote();
      if (!screen || !text) return;
      screen.clipboardPasteFrom(text);
      for (const stroke of PASTE_STROKES) send(...stroke);
      keyboardRef.current?.focus({ preventScroll: true });
    },
    [remote, send, keyboardRef],
  );

  const sendText = (text: string) => {
    const delivery = textDelivery(text);
    if ('paste' in delivery) pasteIntoRemote(delivery.paste);
    else for (const keysym of delivery.keys) press(keysym);
  };

  const inputProps = {
    onKeyDown: (event: KeyboardEvent<HTMLTextAreaElement>) => {
      const key: KeyFacts = event.nativeEvent;
      if (isComposing(key)) return;
      // Tab and every other key go to the remote browser; Esc twice in a row is the way out.
      if (leaveEscape(key, performance.now())) onLeaveKeys();
      if (!remote()) return;
      const keysym = keysymForKeyDown(key);
      if (keysym === undefined) return;
      event.preventDefault();
      keysDown.current.set(event.code || event.key, keysym);
      send(keysym, true);
    },
    onKeyUp: (event: KeyboardEvent<HTMLTextAreaElement>) => {
      const id = event.code || event.key;
      const keysym = keysDown.current.get(id);
      if (keysym === undefined) return;
      keysDown.current.delete(id);
      send(keysym, false);
    },
    onInput: (event: FormEvent<HTMLTextAreaElement>) => {
      const native = event.nativeEvent as InputEvent;
      const delivery = inputDelivery(native, event.currentTarget.value);
      if (delivery && 'text' in delivery) sendText(delivery.text);
      else if (delivery) press(delivery.keysym);
      // Composed text stays until its composition ends.
      if (!native.isComposing) event.currentTarget.value = '';
    },
    onCompositionEnd: (event: CompositionEvent<HTMLTextAreaElement>) => {
      if (event.data) sendText(event.data);
      event.currentTarget.value = '';
    },
    /** Releases whatever was held when the input loses focus (no key stays down on the remote side). */
    onBlur: () => {
      for (const keysym of keysDown.current.values()) send(keysym, false);
      keysDown.current.clear();
    },
    // Text pasted here goes to the remote browser's clipboard and is pasted there.
    onPaste: (event: ClipboardEvent<HTMLTextAreaElement>) => {
      const text = event.clipboardData.getData('text/plain');
      event.preventDefault();
      if (text) pasteIntoRemote(text);
    },
  };

  const toggleModifier = useCallback((modifier: StickyModifier) => setModifiers((held) => ({ ...held, [modifier]: !held[modifier] })), []);
  return { modifiers, toggleModifier, press, pasteIntoRemote, inputProps };
}
