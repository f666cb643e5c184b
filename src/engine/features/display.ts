// Watching and hearing a session, as a feature of the engine (module.ts): the display's RFB
// channel (input through the control seats), the sound channel where sound is configured and its
// programs are installed (decisions.md 53), the video channel where this host encodes H.264
// (decisions.md 65), and the editing channel (the page's text field state).
import type { EngineCore } from '../core.js';
import type { EngineModule } from '../module.js';
import { probeSound } from '../runtime/index.js';
import type { ControlModule } from './control.js';
import { editingChannel } from '../channels/editing/editing.js';
import { rfbChannel } from '../channels/rfb/rfb.js';
import { soundChannel } from '../channels/sound/sound.js';
import { videoChannel } from '../channels/video/video.js';

export function displayModule(core: EngineCore, control: ControlModule['seats']): EngineModule {
  const { config, runtime } = core;
  return {
    name: 'display',
    channels: [
      rfbChannel({ seats: config.viewers, displayLimits: config.display, control }),
      soundChannel({ available: config.sound !== false && probeSound().available }),
      videoChannel({ available: core.video }),
      editingChannel({ familyOf: (id) => runtime.images.find((image) => image.id === id)?.family }),
    ],
  };
}
