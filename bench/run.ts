// Benchmark entry: `npm run bench -- <name>` prints one JSON object per line. Figures, not tests.
import { apiBench, operationsBench } from './api.js';
import { appWindowBench } from './app-window.js';
import { automationBench } from './automation.js';
import { blastRadiusBench } from './blast-radius.js';
import { bundleBench } from './bundle.js';
import { clusterBench } from './cluster.js';
import { controlBench } from './control.js';
import { filesBench } from './files.js';
import { hibernationBench } from './hibernation.js';
import { profilesBench } from './profiles.js';
import { proxyBench } from './proxy.js';
import { recordingBench } from './recording.js';
import { videoStillBench } from './video-still.js';
import { runtimeBench } from './runtime.js';
import { sessionReaderBench } from './session-reader.js';
import { soakBench } from './soak.js';
import { soundBench } from './sound.js';
import { standbyBench } from './standby.js';
import { viewerBench } from './viewer.js';

const benches: Record<string, () => Promise<void>> = { bundle: bundleBench, runtime: runtimeBench, api: apiBench, viewer: viewerBench, proxy: proxyBench, cluster: clusterBench, soak: soakBench, sound: soundBench, automation: automationBench, files: filesBench, operations: operationsBench, recording: recordingBench, profiles: profilesBench, control: controlBench, 'video-still': videoStillBench, standby: standbyBench, hibernation: hibernationBench, 'app-window': appWindowBench, 'session-reader': sessionReaderBench, 'blast-radius': blastRadiusBench };
const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const chosen = names.length > 0 ? names : Object.keys(benches);
for (const name of chosen) {
  const bench = benches[name];
  if (!bench) {
    console.error(`unknown benchmark "${name}"; choose from: ${Object.keys(benches).join(', ')}`);
    process.exit(2);
  }
  await bench();
}
