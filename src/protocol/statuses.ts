// Session statuses as plain data: the browser-side code reads them without the schema library.
export const SESSION_STATUSES = ['starting', 'running', 'error', 'stopping', 'suspended', 'deleted'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** The statuses that mean the session has ended. */
export const ENDED_SESSION_STATUSES = ['stopping', 'suspended', 'deleted'] as const satisfies readonly SessionStatus[];

export function isSessionEnded(status: SessionStatus): boolean {
  return (ENDED_SESSION_STATUSES as readonly SessionStatus[]).includes(status);
}
