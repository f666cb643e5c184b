// The interface's calls on sessions themselves (v8 and v7): the images, the OpenAPI document,
// `vm/create`, `vm/data` (v8's `wait`, decisions.md 82), `vm/remove` and `vm/automation`'s address
// for programs (decisions.md 54). v7's own names and codes are added at its edge (v7.ts).
import { parseCreateRequest, parseVmDataWait, type ImageListResponse } from '../../protocol/index.js';
import { answer } from './calls.js';
import { removalAnswer } from './outcomes.js';
import { BOTH, isAccount, type ApiRoute } from './routes.js';
import { V7_TERMS, v7CreateAnswer, v7CreateRequest, v7SessionList } from './v7.js';
import { V8_TERMS, v8CreateAnswer, v8SessionList } from './v8.js';

export const SESSION_ROUTES: readonly ApiRoute[] = [
  {
    method: 'GET', path: 'image', versions: BOTH,
    async answer(_request, _version, { options: { runtime, config } }) {
      const list: ImageListResponse = {
        status: 'ok',
        images: runtime.images.map((image) => ({ id: image.id, name: image.name, enabled: image.enabled })),
        vpnLocations: config.locations.map((location) => ({
          code: location.code,
          name: location.name,
          default: location.default,
          cities: location.cities.map((city) => ({ code: city.code, location: city.location })),
        })),
        residential: { configured: config.residential.upstream !== null, countries: config.residential.countries },
      };
      return answer(list);
    },
  },
  { method: 'GET', path: 'openapi.json', versions: BOTH, answer: async (_request, _version, { options }) => answer(options.openapi()) },
  {
    method: 'POST', path: 'vm/create', versions: BOTH,
    async answer(request, version, { options, programmatic }) {
      const account = await programmatic(request);
      if (!isAccount(account)) return account;
      const body = await request.body();
      if (!body.ok) return answer({ status: 'denied', message: body.message });
      // `profile` is v8's (decisions.md 85): v7 reads its requests as before it existed.
      const parsed = parseCreateRequest(version === 'v8' || typeof body.value !== 'object' || body.value === null || Array.isArray(body.value) ? body.value : { ...body.value, profile: undefined });
      if (!parsed.ok) return answer({ status: 'denied', message: parsed.message });
      const wanted = version === 'v8' ? parsed.value : v7CreateRequest(parsed.value, options.config);
      const outcome = await options.sessions.create(account, wanted, version === 'v8' ? V8_TERMS : V7_TERMS);
      options.observer?.created(request.log?.(), account, wanted, outcome, version);
      return answer(version === 'v8' ? v8CreateAnswer(outcome) : v7CreateAnswer(outcome));
    },
  },
  {
    method: 'GET', path: 'vm/data', versions: BOTH,
    answer(request, version, { options: { sessions }, read }) {
      const id = request.url.searchParams.get('id');
      // v8 only: `wait` answers a starting session once it moves on (decisions.md 82); v7 is as it was.
      const wait = version === 'v8' ? parseVmDataWait(request.url.searchParams.get('wait'), id) : { ok: true as const, value: 0 };
      return read(request, true, async (account) => {
        if (!wait.ok) return { status: 'denied', message: wait.message };
        const rows = id === null || id === '' ? await sessions.list(account, undefined) : await sessions.readWhenStarted(account, id, wait.value, request.signal);
        return version === 'v7' ? v7SessionList(rows) : v8SessionList(rows);
      });
    },
  },
  {
    method: 'POST', path: 'vm/remove', versions: BOTH,
    answer: (request, _version, { options: { sessions }, sessionByBody }) => sessionByBody(request, async (account, id) => answer(removalAnswer(await sessions.remove(account, id)))),
  },
  {
    // Programs driving a session (decisions.md 54): a short-lived DevTools address, never the key.
    method: 'GET', path: 'vm/automation', versions: BOTH,
    answer(request, version, { options: { automation }, read }) {
      const id = request.url.searchParams.get('id');
      return read(request, true, async (account) => (automation ? automation(account, id, version) : { status: 'denied', message: 'programs cannot drive sessions on this service' }));
    },
  },
];
