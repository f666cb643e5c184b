// The viewer's keyboard translation: which keydowns go as keysyms at once, how text goes, the
// sticky modifiers, and the double Esc that leaves the remote screen.
import { describe, expect, it } from 'vitest';
import { createLeaveEscapeWatcher, inputDelivery, isComposing, isShortcut, KEYSYM, keysymForKeyDown, keysymOf, PASTE_STROKES, pressWith, textDelivery, type KeyFacts } from '../../src/core/keyboard.js';

/** A keydown's facts; `altGraph` stands for the AltGraph modifier state. */
const key = (name: string, { altGraph = false, ...facts }: Partial<Omit<KeyFacts, 'getModifierState'>> & { altGraph?: boolean } = {}): KeyFacts => ({
  key: name,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  getModifierState: (modifier) => modifier === 'AltGraph' && altGraph,
  ...facts,
});

describe('keysymOf', () => {
  it('gives Latin-1 characters their own code and the rest Unicode keysyms', () => {
    expect(keysymOf('a')).toBe(0x61);
    expect(keysymOf('é')).toBe(0xe9);
    expect(keysymOf('€')).toBe(0x010020ac);
    expect(keysymOf('😀')).toBe(0x0101f600);
  });
});

describe('keysymForKeyDown', () => {
  it('sends keys that type no text', () => {
    expect(keysymForKeyDown(key('Enter'))).toBe(0xff0d);
    expect(keysymForKeyDown(key('ArrowLeft'))).toBe(0xff51);
    expect(keysymForKeyDown(key('F12'))).toBe(0xffc9);
    expect(keysymForKeyDown(key('Control', { ctrlKey: true }))).toBe(KEYSYM.Control);
    expect(keysymForKeyDown(key('Escape'))).toBe(KEYSYM.Escape);
  });

  it('leaves text to the input events, AltGr text included', () => {
    expect(keysymForKeyDown(key('a'))).toBeUndefined();
    expect(keysymForKeyDown(key('A'))).toBeUndefined();
    expect(keysymForKeyDown(key('@', { altKey: true, ctrlKey: false, altGraph: true }))).toBeUndefined();
    expect(keysymForKeyDown(key(' '))).toBeUndefined();
  });

  it('sends shortcuts as the unshifted letter, except the paste shortcut', () => {
    expect(keysymForKeyDown(key('C', { ctrlKey: true }))).toBe(keysymOf('c'));
    expect(keysymForKeyDown(key('a', { metaKey: true }))).toBe(keysymOf('a'));
    expect(keysymForKeyDown(key('f', { altKey: true }))).toBe(keysymOf('f'));
    expect(keysymForKeyDown(key('v', { ctrlKey: true }))).toBeUndefined();
    expect(keysymForKeyDown(key('V', { metaKey: true }))).toBeUndefined();
  });

  it('leaves composition and dead keys alone', () => {
    for (const facts of [key('a', { isComposing: true }), key('Process'), key('Dead'), key('Unidentified', { keyCode: 229 })]) {
      expect(isComposing(facts)).toBe(true);
      expect(keysymForKeyDown(facts)).toBeUndefined();
    }
    expect(keysymForKeyDown(key('Unidentified'))).toBeUndefined();
  });

  it('tells shortcuts from AltGr typing', () => {
    expect(isShortcut(key('x', { altKey: true }))).toBe(true);
    expect(isShortcut(key('x', { altKey: true, altGraph: true }))).toBe(false);
    expect(isShortcut(key('x', { altKey: true, altGraph: true, ctrlKey: true }))).toBe(true);
  });
});

describe('textDelivery', () => {
  it('types ASCII key by key, line breaks as Return', () => {
    expect(textDelivery('a b\r\nc\rd')).toEqual({ keys: [0x61, 0x20, 0x62, KEYSYM.Return, 0x63, KEYSYM.Return, 0x64] });
  });

  it('pastes anything else, whole and with line breaks made plain', () => {
    expect(textDelivery('café\r\nü')).toEqual({ paste: 'café\nü' });
    expect(textDelivery('日本語')).toEqual({ paste: '日本語' });
    expect(textDelivery('a\tb')).toEqual({ paste: 'a\tb' });
  });
});

describe('inputDelivery', () => {
  it('sends inserted text, falling back to the input value', () => {
    expect(inputDelivery({ inputType: 'insertText', data: 'x', isComposing: false }, 'ignored')).toEqual({ text: 'x' });
    expect(inputDelivery({ inputType: 'insertReplacementText', data: null, isComposing: false }, 'word')).toEqual({ text: 'word' });
    expect(inputDelivery({ inputType: undefined, data: null, isComposing: false }, 'typed')).toEqual({ text: 'typed' });
  });

  it('sends a line break as Return and nothing while composing or deleting', () => {
    expect(inputDelivery({ inputType: 'insertLineBreak', data: null, isComposing: false }, '')).toEqual({ keysym: KEYSYM.Return });
    expect(inputDelivery({ inputType: 'insertText', data: 'k', isComposing: true }, 'k')).toBeNull();
    expect(inputDelivery({ inputType: 'deleteContentBackward', data: null, isComposing: false }, '')).toBeNull();
  });
});

describe('sticky modifiers and paste', () => {
  it('holds the modifiers around a press, released in reverse', () => {
    expect(pressWith(KEYSYM.Tab, [])).toEqual([[KEYSYM.Tab]]);
    expect(pressWith(KEYSYM.Tab, ['Control', 'Alt'])).toEqual([[KEYSYM.Control, true], [KEYSYM.Alt, true], [KEYSYM.Tab], [KEYSYM.Alt, false], [KEYSYM.Control, false]]);
  });

  it('pastes with Ctrl+V', () => {
    expect(PASTE_STROKES).toEqual([[KEYSYM.Control, true], [keysymOf('v')], [KEYSYM.Control, false]]);
  });
});

describe('createLeaveEscapeWatcher', () => {
  it('leaves on the second Esc within the window, then starts over', () => {
    const leaves = createLeaveEscapeWatcher(600);
    expect(leaves(key('Escape'), 1000)).toBe(false);
    expect(leaves(key('Escape'), 1500)).toBe(true);
    expect(leaves(key('Escape'), 1700)).toBe(false);
    expect(leaves(key('Escape'), 2400)).toBe(false);
  });

  it('ignores other keys and Esc shortcuts', () => {
    const leaves = createLeaveEscapeWatcher(600);
    expect(leaves(key('Escape'), 1000)).toBe(false);
    expect(leaves(key('a'), 1100)).toBe(false);
    expect(leaves(key('Escape', { ctrlKey: true }), 1200)).toBe(false);
    expect(leaves(key('Escape'), 1300)).toBe(true);
  });
});
