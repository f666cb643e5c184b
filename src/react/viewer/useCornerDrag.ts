// Dragging the phone's floating "More" button to another corner (issue 44, decisions.md 173):
// with a finger, a pen or a mouse (pointer events), the button follows the pointer once it moved
// more than a tap's wobble, and lands in the corner of the live screen nearest where it was let go.
// A drag is not a press: the click that follows it does not open the sheet.
import { useRef, useState, type PointerEvent as ReactPointerEvent } from 'react';
import { cornerAt, type FloatingCorner } from './floating-corner.js';

/** How far (CSS px) a pointer moves before a press becomes a drag. */
const DRAG_SLOP_PX = 10;

export interface CornerDrag {
  /** How far the button is dragged now (for a transform), or null when it is not. */
  offset: { x: number; y: number } | null;
  handlers: {
    onPointerDown: (event: ReactPointerEvent<HTMLElement>) => void;
    onPointerMove: (event: ReactPointerEvent<HTMLElement>) => void;
    onPointerUp: (event: ReactPointerEvent<HTMLElement>) => void;
    onPointerCancel: () => void;
  };
  /** True once after a drag ended: the click the browser sends after it is not a press. */
  consumeDrag: () => boolean;
}

export function useCornerDrag(enabled: boolean, onCorner: (corner: FloatingCorner) => void): CornerDrag {
  const start = useRef<{ id: number; x: number; y: number; dragging: boolean } | null>(null);
  // Until when a click is the end of a drag (a touch drag often sends none: the next real press must count).
  const swallowClickUntil = useRef(0);
  const [offset, setOffset] = useState<{ x: number; y: number } | null>(null);
  return {
    offset,
    handlers: {
      onPointerDown: (event) => {
        if (!enabled || (event.pointerType === 'mouse' && event.button !== 0)) return;
        start.current = { id: event.pointerId, x: event.clientX, y: event.clientY, dragging: false };
        swallowClickUntil.current = 0;
      },
      onPointerMove: (event) => {
        const pressed = start.current;
        if (!pressed || pressed.id !== event.pointerId) return;
        const x = event.clientX - pressed.x;
        const y = event.clientY - pressed.y;
        if (!pressed.dragging && Math.hypot(x, y) < DRAG_SLOP_PX) return;
        if (!pressed.dragging) {
          pressed.dragging = true;
          try {
            event.currentTarget.setPointerCapture?.(event.pointerId);
          } catch {
            // The pointer is gone already: the next up or cancel ends the drag.
          }
        }
        setOffset({ x, y });
      },
      onPointerUp: (event) => {
        const pressed = start.current;
        start.current = null;
        setOffset(null);
        if (!pressed?.dragging || pressed.id !== event.pointerId) return;
        swallowClickUntil.current = Date.now() + 500;
        const area = event.currentTarget.closest('.rbk-viewer__live')?.getBoundingClientRect();
        if (area && area.width > 0 && area.height > 0) onCorner(cornerAt(event.clientX, event.clientY, area));
      },
      onPointerCancel: () => {
        start.current = null;
        setOffset(null);
      },
    },
    consumeDrag: () => {
      const dragged = Date.now() < swallowClickUntil.current;
      swallowClickUntil.current = 0;
      return dragged;
    },
  };
}
