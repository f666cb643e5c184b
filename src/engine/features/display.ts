// Watching and hearing a session, as a feature of the engine (module.ts): the display's RFB
// channel (input through the sessions' driving, channels/control/), the sound channel where sound is configured and its
// programs are installed (decisions.md 53), the video channel where this host encodes H.264
// (decisions.md 65), and the editing channel (the page's text field state).
import type { EngineCore } from '../core.js';
import type { EngineModule } from '../module.js';
import { probeSound } from '../runtime/index.js';
import type { NodeDriving } from '../channels/control/node-driving.js';
import { editingChannel } from '../channels/editing/editing.js';
import { rfbChannel } from '../channels/rfb/rfb.js';
import { soundChannel } from '../channels/sound/sound.js';
import { videoChannel } from '../channels/video/video.js';

export function displayModule(core: EngineCore, driving: NodeDriving): EngineModule {
  const { config, runtime } = core;
  return {
    name: 'display',
    channels: [
      rfbChannel({ seats: config.viewers, displayLimits: config.display, driving }),
      soundChannel({ available: config.sound !== false && probeSound().available }),
      videoChannel({ available: core.video }),
      editingChannel({ familyOf: (id) => runtime.images.find((image) => image.id === id)?.family }),
    ],
  };
}
