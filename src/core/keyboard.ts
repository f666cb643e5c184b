// The viewer's keyboard as X keysyms for the remote browser: which key events and which text go
// as keys, and which text goes through the remote clipboard. Pure: it reads plain key facts, so
// it has no DOM and is tested on its own (test/core/keyboard.test.ts).

export const KEYSYM = { Escape: 0xff1b, Tab: 0xff09, Control: 0xffe3, Alt: 0xffe9, BackSpace: 0xff08, Return: 0xff0d } as const;

/** The on-screen keyboard's sticky modifiers. */
export type StickyModifier = 'Control' | 'Alt';

/** X keysym of a character (Latin-1 directly, the rest as Unicode keysyms, which Xvnc maps to a spare key). */
export function keysymOf(character: string): number {
  const code = character.codePointAt(0) ?? 0;
  return code < 0x100 ? code : 0x01000000 | code;
}

/**
 * X keysyms of the keys that type no text (DOM `KeyboardEvent.key` names). Text itself arrives
 * through the input's `input` and `composition` events, whatever keyboard, layout or input
 * method made it, and goes to the remote browser as the characters' own keysyms.
 */
const KEY_KEYSYMS: Record<string, number> = {
  Backspace: 0xff08, Tab: 0xff09, Enter: 0xff0d, Escape: 0xff1b, Delete: 0xffff, Insert: 0xff63,
  Home: 0xff50, End: 0xff57, PageUp: 0xff55, PageDown: 0xff56,
  ArrowLeft: 0xff51, ArrowUp: 0xff52, ArrowRight: 0xff53, ArrowDown: 0xff54,
  Shift: 0xffe1, Control: 0xffe3, Alt: 0xffe9, Meta: 0xffe7, AltGraph: 0xfe03, CapsLock: 0xffe5, ContextMenu: 0xff67,
  F1: 0xffbe, F2: 0xffbf, F3: 0xffc0, F4: 0xffc1, F5: 0xffc2, F6: 0xffc3, F7: 0xffc4, F8: 0xffc5, F9: 0xffc6, F10: 0xffc7, F11: 0xffc8, F12: 0xffc9,
};

/** What the viewer reads of a keydown: the part of a DOM `KeyboardEvent` it uses (a plain object in tests). */
export interface KeyFacts {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  isComposing?: boolean;
  keyCode?: number;
  getModifierState(key: 'AltGraph'): boolean;
}

/** True when a key event is a shortcut (Ctrl, Meta, or Alt without AltGr) rather than typing. */
export function isShortcut(key: KeyFacts): boolean {
  return key.ctrlKey || key.metaKey || (key.altKey && !key.getModifierState('AltGraph'));
}

/** An IME composing, or a dead key waiting for its letter: the text comes with the input events. */
export function isComposing(key: KeyFacts): boolean {
  return Boolean(key.isComposing) || key.keyCode === 229 || key.key === 'Dead' || key.key === 'Process';
}

/**
 * The keysym a keydown sends at once (and releases at its keyup), or `undefined` when the key is
 * left to the text input: text, composition, and Ctrl+V (or Cmd+V), whose paste event sends the
 * viewer's clipboard. Shortcuts go as the unshifted letter's key.
 */
export function keysymForKeyDown(key: KeyFacts): number | undefined {
  if (isComposing(key)) return undefined;
  const shortcut = isShortcut(key);
  if (shortcut && key.key.toLowerCase() === 'v') return undefined;
  const single = [...key.key].length === 1;
  if (single && !shortcut) return undefined;
  return KEY_KEYSYMS[key.key] ?? (single ? keysymOf(key.key.toLowerCase()) : undefined);
}

/**
 * How text (typed, composed by an IME or a dead key, or from a touch keyboard) reaches the remote
 * browser. ASCII goes key by key; any other character may lack a key in the remote layout, and
 * Xvnc's spare-key mapping for it is not reliably read by the remote browser before the key
 * event, so such text goes through the remote clipboard (UTF-8) and Ctrl+V, exactly.
 */
export function textDelivery(text: string): { keys: number[] } | { paste: string } {
  const normal = text.replace(/\r\n?/g, '\n');
  if (!/^[\x20-\x7e\n]*$/.test(normal)) return { paste: normal };
  return { keys: [...normal].map((character) => (character === '\n' ? KEYSYM.Return : keysymOf(character))) };
}

/**
 * What an `input` event of the viewer's text input sends: its text, a Return for a line break, or
 * nothing (composed text is sent once, whole, when the composition ends).
 */
export function inputDelivery(input: { inputType?: string | undefined; data: string | null; isComposing: boolean }, value: string): { text: string } | { keysym: number } | null {
  if (input.isComposing) return null;
  if (input.inputType === 'insertText' || input.inputType === 'insertReplacementText' || input.inputType === undefined) return { text: input.data ?? value };
  if (input.inputType === 'insertLineBreak') return { keysym: KEYSYM.Return };
  return null;
}

/** A key event for the remote side: a press and release without `down`. */
export type KeyStroke = [keysym: number, down?: boolean];

/** A press with the sticky modifiers held around it. */
export function pressWith(keysym: number, held: readonly StickyModifier[]): KeyStroke[] {
  return [...held.map((m): KeyStroke => [KEYSYM[m], true]), [keysym], ...[...held].reverse().map((m): KeyStroke => [KEYSYM[m], false])];
}

/** Ctrl+V on the remote side, after its clipboard was set. */
export const PASTE_STROKES: readonly KeyStroke[] = [[KEYSYM.Control, true], [keysymOf('v')], [KEYSYM.Control, false]];

/** Two Escs closer than this move the keyboard focus out of the remote screen, to the toolbar. */
export const LEAVE_ESCAPE_MS = 600;

/**
 * Watches for the way out for keyboard users, Esc twice in a row (the remote browser gets both
 * Escs too): returns true for an Esc that follows another within LEAVE_ESCAPE_MS.
 */
export function createLeaveEscapeWatcher(windowMs = LEAVE_ESCAPE_MS): (key: KeyFacts, now: number) => boolean {
  let lastEscapeAt = 0;
  return (key, now) => {
    if (key.key !== 'Escape' || isShortcut(key)) return false;
    if (now - lastEscapeAt < windowMs) {
      lastEscapeAt = 0;
      return true;
    }
    lastEscapeAt = now;
    return false;
  };
}
