// The editing channel's message (issue 36): whether a text field in the session's browser has the
// keyboard focus. The engine sends one at once and one at each change; the viewer sends nothing.
export interface EditingMessage {
  editing: boolean;
}

/** Reads one message of the editing channel; null for anything else. */
export function parseEditingMessage(text: string): EditingMessage | null {
  try {
    const value = JSON.parse(text) as Partial<EditingMessage> | null;
    return value && typeof value.editing === 'boolean' ? { editing: value.editing } : null;
  } catch {
    return null;
  }
}
