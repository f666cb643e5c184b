// What a recording's directory holds, named once (issue 48): the runtime's recorder writes the
// media and its two marks; the engine's recordings (recordings/) write the timeline beside it and
// the MP4 copy made from the media, and read all of them.
/** The picture and sound, as the recorder writes them (Matroska). */
export const RECORDING_MEDIA = 'media.mkv';
/** Beside the media once the recorder closed it: the recording is whole. */
export const RECORDING_CLOSED = `${RECORDING_MEDIA}.closed`;
/**
 * Beside the media from its first block on: the wall time (ISO 8601) its time 0 shows, so a
 * timeline's times map onto the media's however late the encoders' first output came.
 */
export const RECORDING_START = `${RECORDING_MEDIA}.start`;
/** The page's addresses and titles over time (recordings/timeline.ts). */
export const RECORDING_TIMELINE = 'timeline.jsonl';
/** The whole recording copied into MP4 once it has ended (recordings/media.ts), kept beside the media. */
export const RECORDING_MP4 = 'media.mp4';
/** Every file a recording keeps, as its kept size counts them. */
export const RECORDING_FILES = [RECORDING_MEDIA, RECORDING_MP4, RECORDING_TIMELINE] as const;
