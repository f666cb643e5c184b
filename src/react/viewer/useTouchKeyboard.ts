// When a phone's on-screen keyboard shows (issue 36, decisions.md 106). The viewer's text input
// (useRemoteKeyboard.ts) takes the focus at every press on the remote screen, so keys always go
// there; where the engine tells when a text field in the session's browser has the focus (the
// editing channel), the input asks for no on-screen keyboard (`inputmode="none"`) until a press of
// this viewer's lands in one, and for one (`inputmode="text"`) from then until the field loses the
// focus. The Keyboard button asks for one at any time. Where the engine does not tell (Firefox, an
// older engine), the input keeps asking for one, as before: a tap raises the keyboard.
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import { followRemoteEditing } from '../../core/remote-editing.js';

/** A press this recent (ms) is what put the remote focus in a field: this viewer's keyboard opens. */
const PRESS_OPENS_WITHIN_MS = 3000;

/** Asks for the on-screen keyboard at once (before React renders the new `inputmode`) and focuses the input. */
function showKeyboardOn(input: HTMLTextAreaElement | null): void {
  if (!input) return;
  if (input.inputMode === 'none') input.inputMode = 'text';
  input.focus({ preventScroll: true });
}

export interface TouchKeyboard {
  /** The text input's `inputmode`: undefined where the engine does not tell (the browser decides, as before). */
  inputMode: 'none' | 'text' | undefined;
  /** Whether a text field in the remote browser has the focus (as the engine last told). */
  remoteEditing: boolean;
  /** A press on the remote screen, now. */
  pressed(): void;
  /** The Keyboard button: the keyboard opens (the input takes the focus within the button's press). */
  open(): void;
}

export function useTouchKeyboard({ shareBase, linkId, told, viewOnly, hidden, keyboardRef }: { shareBase: string; linkId: string; /** The state says `editing: true`. */ told: boolean; viewOnly: boolean; hidden: boolean; keyboardRef: RefObject<HTMLTextAreaElement | null> }): TouchKeyboard {
  const [remoteEditing, setRemoteEditing] = useState(false);
  const [wanted, setWanted] = useState(false);
  const lastPress = useRef(Number.NEGATIVE_INFINITY);
  const following = told && !viewOnly && !hidden;

  useEffect(() => {
    if (!following) return;
    let last = false;
    const stop = followRemoteEditing(shareBase, linkId, (editing) => {
      if (editing === last) return;
      last = editing;
      setRemoteEditing(editing);
      if (!editing) return setWanted(false);
      if (performance.now() - lastPress.current > PRESS_OPENS_WITHIN_MS) return;
      setWanted(true);
      showKeyboardOn(keyboardRef.current);
    });
    return () => {
      stop();
      setRemoteEditing(false);
      setWanted(false);
    };
  }, [following, shareBase, linkId, keyboardRef]);

  const pressed = useCallback(() => {
    lastPress.current = performance.now();
  }, []);
  const open = useCallback(() => {
    setWanted(true);
    showKeyboardOn(keyboardRef.current);
  }, [keyboardRef]);

  return { inputMode: following ? (wanted ? 'text' : 'none') : undefined, remoteEditing, pressed, open };
}
