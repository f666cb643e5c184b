// The v8 calls the automation benchmarks make (automation.ts, automation-bidi.ts): an account on a
// plan without limits that matter, create and wait until running, and a session's automation
// address (a Chromium session's browserWSEndpoint, a Firefox ESR session's webDriverBiDiEndpoint).
import type { Engine } from '../src/engine/engine.js';

export type BenchApi = Awaited<ReturnType<typeof serveOn>>;

export async function serveOn(engine: Engine) {
  const key = (await engine.accounts.create({ contact: `bench-${Date.now()}-${Math.random()}@example.com`, plans: ['unlimited'] })).apiKey.key;
  const call = async (path: string, body?: unknown) => {
    const response = await fetch(`${engine.url}/v8${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()) as Record<string, any>;
  };
  const running = async (vmId: string) => {
    for (;;) {
      const status = (await call(`/vm/data?id=${vmId}`)).data?.[0]?.status;
      if (status === 'running') return;
      if (status !== 'starting') throw new Error(`session ${vmId} is ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const endpoint = async (vmId: string) => {
    const answer = await call(`/vm/automation?id=${vmId}`);
    if (answer.status !== 'ok') throw new Error(`automation address: ${JSON.stringify(answer)}`);
    return (answer.browserWSEndpoint ?? answer.webDriverBiDiEndpoint) as string;
  };
  return { call, running, endpoint };
}
