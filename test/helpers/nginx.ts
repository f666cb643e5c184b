// Test helper: a throwaway nginx as the load balancer in front of several engine nodes, for the
// tests and benchmarks of a cluster. It runs Debian's nginx directly (not the system service) with
// a config of its own in a temp prefix, on 127.0.0.1 and a free port, and sends each request to
// the next node in turn (no session affinity: any node must serve any session).
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, stopProcess, waitUntilServing } from './server-process.js';

export const NGINX = '/usr/sbin/nginx';

export interface TestNginx {
  /** The load balancer's address, http://127.0.0.1:port. */
  url: string;
  /** Replaces the nodes (http://127.0.0.1:port each); resolves once nginx serves with the new list. */
  setUpstreams(upstreams: string[]): Promise<void>;
  stop(): Promise<void>;
}

// Answers which config nginx serves, so a reload can be waited for; tests only.
const GENERATION_PATH = '/.test-nginx-generation';

/**
 * The config, in the shape a deployment uses in front of engine nodes (docs reuse it): round robin
 * over the nodes, WebSocket upgrades passed on (viewers, CDP), no buffering (server-sent events),
 * long read timeouts (a viewer connection stays open for the whole session), kept-alive
 * connections to the nodes (an empty Connection header unless the client upgrades), the client's address
 * and scheme passed in X-Forwarded-For / X-Forwarded-Proto, and a node that refuses or does not
 * connect within 1 s skipped for the next (nginx does not retry a request a node has received).
 *
 *   upstream engine_nodes {
 *     server 10.0.0.11:8080;
 *     server 10.0.0.12:8080;
 *     keepalive 32;
 *   }
 *   map $http_upgrade $connection_upgrade { default upgrade; '' ''; }
 *   server {
 *     listen 443 ssl;
 *     location / {
 *       proxy_pass http://engine_nodes;
 *       proxy_http_version 1.1;
 *       proxy_set_header Host $http_host;
 *       proxy_set_header Upgrade $http_upgrade;
 *       proxy_set_header Connection $connection_upgrade;
 *       proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
 *       proxy_set_header X-Forwarded-Proto $scheme;
 *       proxy_set_header X-Request-Id $request_id;
 *       proxy_buffering off;
 *       proxy_request_buffering off;
 *       proxy_read_timeout 1h;
 *       proxy_send_timeout 1h;
 *       proxy_connect_timeout 1s;
 *       proxy_next_upstream error timeout;
 *     }
 *   }
 */
function config(dir: string, port: number, upstreams: string[], generation: number): string {
  const servers = upstreams.map((upstream) => `      server ${new URL(upstream).host};`).join('\n');
  return `# Throwaway nginx of the tests (test/helpers/nginx.ts); everything it writes is in ${dir}.
daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client-body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream engine_nodes {
${servers}
    keepalive 32;
  }
  map $http_upgrade $connection_upgrade { default upgrade; '' ''; }
  server {
    listen 127.0.0.1:${port};
    location = ${GENERATION_PATH} { return 200 "${generation}"; }
    location / {
      proxy_pass http://engine_nodes;
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Request-Id $request_id;
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
      proxy_connect_timeout 1s;
      proxy_next_upstream error timeout;
    }
  }
}
`;
}

export async function startNginx(options: { upstreams: string[] }): Promise<TestNginx> {
  const dir = await mkdtemp(join(tmpdir(), 'rbk-nginx-'));
  // As root, nginx's worker runs as `nobody` and must reach its temp paths in here.
  await chmod(dir, 0o755);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const configFile = join(dir, 'nginx.conf');
  const logFile = join(dir, 'error.log');
  let generation = 1;
  await writeFile(configFile, config(dir, port, options.upstreams, generation));
  // -e: the log for errors before the config is read (nginx's default is under /var/log).
  const log = openSync(logFile, 'a');
  const child = spawn(NGINX, ['-p', dir, '-c', configFile, '-e', logFile], { stdio: ['ignore', log, log] });
  closeSync(log);
  // After a reload the old worker may still take a connection or two while it winds down: the new
  // config counts as served once several new connections in a row all get it.
  const serving = (expected: number) => async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const answer = await get(`${url}${GENERATION_PATH}`);
      if (answer !== String(expected)) throw new Error(`serving config ${answer}, not ${expected} yet`);
    }
  };
  const stop = async () => {
    // SIGTERM is nginx's fast shutdown: open WebSockets do not hold it up.
    await stopProcess(child, 'SIGTERM');
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilServing('nginx', child, logFile, serving(generation), 10_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    stop,
    async setUpstreams(upstreams) {
      generation++;
      await writeFile(configFile, config(dir, port, upstreams, generation));
      child.kill('SIGHUP');
      await waitUntilServing('nginx', child, logFile, serving(generation), 10_000);
    },
  };
}

/** GETs `url` and answers its body. */
function get(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, { agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve(body));
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}
