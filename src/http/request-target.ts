// A request's target as a URL, read as HTTP defines it (RFC 9112, 3.2), for the engine's server
// and the proxy route's node adapter alike. A target in origin form (`/path?query`) is a path,
// even when it starts with `//`: resolved against a base as a relative reference, `//b?` would
// name the host `b` and the path `/`, and a bare `//` would not parse at all.

/** The target's URL on `origin` (`http://host`); null when it is neither a path nor a URL. */
export function requestTargetUrl(target: string | undefined, origin: string): URL | null {
  const raw = target || '/';
  try {
    return raw.startsWith('/') ? new URL(`${origin}${raw}`) : new URL(raw, origin);
  } catch {
    return null;
  }
}
