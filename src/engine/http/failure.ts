// What the caller is told when the service itself fails (not their request): the interface's
// `error` envelope, with what to do. The database's own conditions are named, so an operator
// reading a caller's report knows where to look; nothing internal (paths, SQL, addresses) is shown.

/** The database condition behind an error (rbk_store_errors_total counts by it), or null for anything else. */
export function databaseFailureKind(error: unknown): 'busy' | 'disk_full' | 'unreachable' | null {
  const { code, message = '' } = (error ?? {}) as { code?: string; message?: string };
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code === '55P03' || code === '40P01') return 'busy';
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === '53100') return 'disk_full';
  if (code === 'ECONNREFUSED' || code === '57P01' || /cannot reach the database|Connection terminated|connection timeout/i.test(message)) return 'unreachable';
  return null;
}

export function serviceFailure(error: unknown): { status: 'error'; message: string } {
  switch (databaseFailureKind(error)) {
    case 'busy':
      return { status: 'error', message: 'the service database is busy (held by another process); nothing was changed; try again in a moment' };
    case 'disk_full':
      return { status: 'error', message: 'the service is out of disk space; nothing was changed; try again later (its operator must free space)' };
    case 'unreachable':
      return { status: 'error', message: 'the service cannot reach its database; nothing was changed; try again in a minute' };
    default:
      return { status: 'error', message: 'the service failed; try again later' };
  }
}
