// The WebSocket close codes a connection to a channel ends with, as the viewer shows them
// (docs/viewer.md). The router's are the same for every channel; RFB's end and policy closes are
// the last two.
import type { CloseReason } from './channel.js';

export const VIEWER_CLOSE = {
  ended: { code: 4000, reason: 'the session has ended' },
  notRunning: { code: 4001, reason: 'the session display is not up yet, or the session has ended' },
  full: { code: 4002, reason: 'too many viewers on this link' },
  displayGone: { code: 4003, reason: 'the session display closed' },
  protocol: { code: 4004, reason: 'the viewer sent something that is not RFB this display accepts' },
  address: { code: 4005, reason: 'too many viewers from this address' },
  busy: { code: 4006, reason: 'the service is busy; try again in a moment' },
  // The door (door.ts) cuts a connection off: its reader fell a bounded buffer behind, or its peer stopped answering pings.
  slow: { code: 4007, reason: 'the connection did not keep up with the stream' },
  silent: { code: 4008, reason: 'the connection stopped answering' },
} as const satisfies Record<string, CloseReason>;
