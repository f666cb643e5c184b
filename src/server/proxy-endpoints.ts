// The proxy route's endpoints: which one a method and path under the base path name, or the
// methods the path takes (405), or none (404).
import { filesEndpointOf, type FilesEndpoint } from './proxy-files.js';
import type { ProfilesEndpoint } from './proxy-profiles.js';
import { recordingEndpointOf, type RecordingEndpoint } from './proxy-recordings.js';

/** A handle from the path; '' (no handle opens) when it is not valid percent-encoding. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}

export type Endpoint = { name: 'images' | 'create' | 'usage' | 'embed' } | { name: 'read' | 'end' | 'control' | 'viewer'; handle: string } | { name: FilesEndpoint; handle: string } | { name: RecordingEndpoint; handle: string } | ProfilesEndpoint;

export function endpointOf(method: string, rest: string): Endpoint | { allow: string } | null {
  const path = rest.replace(/\/$/, '');
  const only = (allowed: string, endpoint: Endpoint) => (allowed.split(', ').includes(method) ? endpoint : { allow: allowed });
  if (path === '/images') return only('GET', { name: 'images' });
  if (path === '/usage') return only('GET', { name: 'usage' });
  if (path === '/embed') return only('GET, POST', { name: 'embed' });
  if (path === '/sessions') return only('POST', { name: 'create' });
  if (path === '/profiles') return only('GET, POST', { name: 'profiles' });
  const profile = /^\/profiles\/([^/]+)$/.exec(path);
  if (profile) return only('POST, DELETE', { name: 'profile', handle: decoded(profile[1]!) });
  // Who drives (issue 36): the owner's actions, and the pass that names the owner's viewer.
  const control = /^\/sessions\/([^/]+)\/(control|viewer)$/.exec(path);
  if (control) return only('POST', { name: control[2] as 'control' | 'viewer', handle: decoded(control[1]!) });
  const session = /^\/sessions\/([^/]+)(?:\/(files(?:\/download|\/upload)?|recording(?:\/media|\/link)?))?$/.exec(path);
  if (!session) return null;
  const files = filesEndpointOf(session[2]);
  const handle = decoded(session[1]!);
  if (files) return only(files.method, { name: files.name, handle });
  const recording = recordingEndpointOf(session[2]);
  if (recording) return only(recording.method, { name: recording.name, handle });
  return method === 'GET' ? { name: 'read', handle } : only('POST, DELETE', { name: 'end', handle });
}
