// A JSON body the proxy route reads: an object under the cap (413 past it, 400 for anything else
// refused), for the create, the profile calls and the control calls alike.
import { readJsonRequest } from '../http/json-body.js';

/** The request's body as a JSON object, or why not with the HTTP status to answer. */
export async function readJsonObject(request: Request): Promise<{ ok: true; value: Record<string, unknown> } | { ok: false; status: number; message: string }> {
  const body = await readJsonRequest(request);
  if (!body.ok) return { ok: false, status: body.refusal === 'too_large' ? 413 : 400, message: body.message };
  const { value } = body;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, status: 400, message: 'request body must be a JSON object' };
  return { ok: true, value: value as Record<string, unknown> };
}

