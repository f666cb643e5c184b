// Framing the viewer in other sites' pages (issue 44, decisions.md 134): the exact origins an
// account allows to frame its share links (`POST /v8/user/embed`), the narrower list one session
// may have (`embed` of vm/create), and the check each origin passes. The engine writes the list
// into the viewer site's `frame-ancestors`, so an origin must be one that cannot say anything else
// there: no wildcard, no path, no separator, https (plain http only on loopback).
import { z } from 'zod';

/** The most origins an account (or a session) may list. */
export const EMBED_ORIGINS_MAX = 20;
/** The longest origin accepted, in characters. */
export const EMBED_ORIGIN_MAX = 255;

/** `scheme://host[:port]` in the form browsers serialize an origin: lower case, no trailing slash. */
const ORIGIN_FORM = /^(https?):\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;

/** Hosts plain http may be used on: this machine (a developer's page, the tests). */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/**
 * What is wrong with `value` as an origin allowed to frame the viewer, in words that name the
 * expected form; null when it is one. Each accepted origin is exactly what a browser sends as
 * the framing page's origin (`new URL(value).origin === value`).
 */
export function embedOriginProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return 'must be an origin such as https://app.example.com';
  if (value.length > EMBED_ORIGIN_MAX) return `must be at most ${EMBED_ORIGIN_MAX} characters`;
  if (value.includes('*')) return `"${value.slice(0, 100)}": no wildcards; list each origin exactly, such as https://app.example.com`;
  const form = ORIGIN_FORM.exec(value);
  let origin: string | null = null;
  try {
    origin = new URL(value).origin;
  } catch {
    origin = null;
  }
  if (!form || origin !== value) {
    return `"${value.slice(0, 100)}" is not an origin: send scheme://host[:port] only, in lower case, without a path, query, user or trailing slash (such as https://app.example.com)`;
  }
  // CSP's host-source has no IPv6 form: Chromium and Firefox ignore such an entry of frame-ancestors, so the frame would be refused (decisions.md 181).
  if (form[2]!.startsWith('[')) return `"${value}": browsers do not match an IPv6 address in frame-ancestors; frame the viewer from a page with a host name (such as https://app.example.com, or http://localhost:8080)`;
  if (form[1] === 'http' && !isLoopback(form[2]!)) return `"${value}": must be https (plain http only for localhost or 127.0.0.1)`;
  return null;
}

/** An origin list: each origin checked, at most EMBED_ORIGINS_MAX (repeats are the reader's to drop: uniqueOrigins). */
export function embedOriginsSchema(field: string) {
  return z
    .array(z.string(`${field}: each origin must be a string such as "https://app.example.com"`), `${field}: must be a list of origins such as ["https://app.example.com"] (empty: framing off)`)
    .superRefine((origins, context) => {
      if (origins.length > EMBED_ORIGINS_MAX) {
        context.addIssue({ code: 'custom', message: `${field}: at most ${EMBED_ORIGINS_MAX} origins (${origins.length} sent)` });
        return;
      }
      origins.forEach((origin, index) => {
        const problem = embedOriginProblem(origin);
        if (problem) context.addIssue({ code: 'custom', message: `${field}[${index}]: ${problem}` });
      });
    });
}

/** The list with repeats dropped, the first of each kept. */
export function uniqueOrigins(origins: readonly string[]): string[] {
  return [...new Set(origins)];
}

/** POST /v8/user/embed: the whole list, replacing the account's; `[]` turns framing off. */
export const embedRequestSchema = z.object({ origins: embedOriginsSchema('origins') });
export type EmbedRequest = z.infer<typeof embedRequestSchema>;

/** POST and GET /v8/user/embed: the account's list as it is now (empty: no site may frame its links). */
export const embedResponseSchema = z.object({ status: z.literal('ok'), origins: z.array(z.string()) });
export type EmbedResponse = z.infer<typeof embedResponseSchema>;

/** vm/create's `embed` (v8): the origins that may frame this session's links, a subset of the account's. */
export const sessionEmbedSchema = z.object(
  { origins: embedOriginsSchema('embed.origins') },
  'embed: must be an object such as {"origins": ["https://app.example.com"]}',
);

/**
 * The origins that may frame a session's links now: the account's list, narrowed by the session's
 * own when it has one (an origin the account dropped since is dropped for the session too).
 */
export function framingOrigins(account: readonly string[], session: readonly string[] | null): string[] {
  return session === null ? [...account] : session.filter((origin) => account.includes(origin));
}
