// The service client's calls on who drives a session (issue 36, decisions.md 99-101): the owner's
// take, give, release and mode (`vm/control`) and the pass that names the owner's viewer
// (`vm/viewer`), over the client's one checked request (service-client.ts).
import type { z } from 'zod';
import { controlAnswerSchema, viewerPassResponseSchema, type ControlAction, type ControlAnswer, type ViewerPassResponse } from '../protocol/index.js';

type Request = <T>(call: { method: 'GET' | 'POST'; path: string; what: string; schema: z.ZodType<T>; body?: unknown; authenticated: boolean; repeatable: boolean; signal: AbortSignal | undefined }) => Promise<T>;
type Options = { signal?: AbortSignal } | undefined;

export interface ControlCalls {
  /** POST /v8/vm/control: the owner takes control back, gives it, releases it, or changes the mode. */
  control(vmId: string, action: ControlAction, options?: Options): Promise<ControlAnswer>;
  /** POST /v8/vm/viewer: a pass that names the owner's viewer (`name`; "Guest N" without one). */
  viewerPass(vmId: string, name: string | undefined, options?: Options): Promise<ViewerPassResponse>;
}

export function controlCalls(request: Request): ControlCalls {
  return {
    // Not repeated: a second "give" after a lost answer could move control on again.
    control: (vmId, action, options) =>
      request({ method: 'POST', path: 'vm/control', what: 'control', schema: controlAnswerSchema, body: { id: vmId, ...action }, authenticated: true, repeatable: false, signal: options?.signal }) as Promise<ControlAnswer>,
    viewerPass: (vmId, name, options) =>
      request({ method: 'POST', path: 'vm/viewer', what: 'the viewer pass', schema: viewerPassResponseSchema, body: { id: vmId, ...(name === undefined ? {} : { name }) }, authenticated: true, repeatable: true, signal: options?.signal }),
  };
}
