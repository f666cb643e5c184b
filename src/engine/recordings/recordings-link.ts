// Recordings in a cluster (issue 35, decisions.md 107): a recording stays on the node that ran its
// session (its picture, sound and timeline are written there as they happen), and any node answers
// for it. The node a caller reached asks the keeper over the node link (node-link.ts `call`),
// `/internal/v1/recordings/<id>/(info|media|remove)` and `/internal/v1/recordings/meters?account=`
// (routes of the link's one signed table, node-routes.ts), and passes the answer through: the media
// streams as it comes, with the caller's range (signed in the query). The caller's key and its
// session were checked where the request arrived; the keeper only reads or removes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import type { NodeLink } from '../cluster/node-link.js';
import type { NodeCall, NodeRoute } from '../cluster/node-routes.js';
import { sendJson } from '../http/respond.js';
import type { SessionRow, Store } from '../store/store.js';
import type { RecordingOutcome, RecordingsAccess } from './recordings.js';
/** What of the keeper's media answer reaches the caller. */
const MEDIA_HEADERS = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'cache-control', 'retry-after'];
/** How long a call for a description, a removal or a meter may take. */
const CALL_TIMEOUT_MS = 10_000;

export interface RecordingsLinkOptions {
  /** The node link: its signed calls out. */
  link: Pick<NodeLink, 'call' | 'callJson'>;
  /** This node's id: a session whose `node_id` is another's is kept there. */
  nodeId: string;
  /** The recordings this node keeps. */
  here: RecordingsAccess;
  store: Pick<Store, 'session' | 'recordedSessions'>;
}

const unreachable = { status: 'error' as const, message: 'the node that keeps this recording is not reachable now; try again when it is back' };

export class RecordingsLink {
  constructor(private readonly options: RecordingsLinkOptions) {}

  /** Megabytes the account's recordings keep on the other nodes, as each says; a keeper that is away adds nothing until it is back. */
  async keptElsewhereMb(accountId: string): Promise<number> {
    const { nodeId } = this.options;
    const others = new Set((await this.options.store.recordedSessions(accountId)).map((row) => row.node_id).filter((node): node is string => !!node && node !== nodeId));
    let megabytes = 0;
    for (const node of others) {
      const answer = await this.json<{ status: string; recording_mb_kept?: number }>(node, 'GET', `meters?account=${encodeURIComponent(accountId)}`);
      if (answer.status === 'ok' && typeof answer.recording_mb_kept === 'number') megabytes += answer.recording_mb_kept;
    }
    return megabytes;
  }

  /** The recordings as the API reaches them: here, or through the node that ran the session. */
  get access(): RecordingsAccess {
    const { here, nodeId } = this.options;
    const keeper = (row: SessionRow) => (row.node_id && row.node_id !== nodeId ? row.node_id : null);
    return {
      read: (row) => {
        const node = keeper(row);
        return node ? this.json<RecordingOutcome>(node, 'GET', `${row.id}/info`) : here.read(row);
      },
      remove: (row) => {
        const node = keeper(row);
        return node ? this.json(node, 'POST', `${row.id}/remove`) : here.remove(row);
      },
      meters: async (accountId) => {
        const megabytes = (await here.meters(accountId)).recording_mb_kept + (await this.keptElsewhereMb(accountId));
        return { recording_mb_kept: Math.round(megabytes * 10) / 10 };
      },
      sendMedia: async (range, response, row) => {
        const node = keeper(row);
        if (!node) return here.sendMedia(range, response, row);
        let answer: IncomingMessage;
        try {
          answer = await this.options.link.call(node, 'GET', `/internal/v1/recordings/${row.id}/media${range ? `?range=${encodeURIComponent(range)}` : ''}`);
        } catch {
          return sendJson(response, unreachable, 503, { 'retry-after': '10' });
        }
        const headers: Record<string, string> = {};
        for (const name of MEDIA_HEADERS) {
          const value = answer.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        response.writeHead(answer.statusCode ?? 502, headers);
        response.once('close', () => answer.destroy());
        pipeline(answer, response, () => undefined);
      },
    };
  }

  /** A JSON call to the keeper, its answer, or that it could not be reached. */
  private async json<T>(node: string, method: 'GET' | 'POST', path: string): Promise<T | typeof unreachable> {
    return (await this.options.link.callJson<T>(node, method, `/internal/v1/recordings/${path}`, '', CALL_TIMEOUT_MS))?.body ?? unreachable;
  }

  /** Its routes on the node link (node-routes.ts, which checks each call's signature): the keeper's side. */
  get routes(): NodeRoute[] {
    const { here, nodeId, store } = this.options;
    /** The recording, if this node keeps it; else the refusal is sent. */
    const kept = (use: (row: SessionRow, call: NodeCall, response: ServerResponse) => Promise<void>): NodeRoute['answer'] => async (call, response) => {
      const row = await store.session(call.id);
      if (!row || row.node_id !== nodeId) return sendJson(response, { status: 'denied', message: 'id: this node does not keep that recording' }, 404);
      await use(row, call, response);
    };
    return [
      {
        method: 'GET', path: 'recordings/meters', body: 'none',
        answer: async ({ url }, response) => sendJson(response, { status: 'ok', ...(await here.meters(url.searchParams.get('account') ?? '')) }),
      },
      { method: 'GET', path: 'recordings/:id/info', body: 'none', answer: kept(async (row, _call, response) => sendJson(response, await here.read(row))) },
      { method: 'POST', path: 'recordings/:id/remove', body: 'none', answer: kept(async (row, _call, response) => sendJson(response, await here.remove(row))) },
      { method: 'GET', path: 'recordings/:id/media', body: 'none', answer: kept((row, { url }, response) => here.sendMedia(url.searchParams.get('range') ?? undefined, response, row)) },
    ];
  }
}
