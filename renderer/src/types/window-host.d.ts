// The Electron preload exposes the inspector transport here; in a browser (serve mode) it is
// absent. The audio log is ours: the audio module appends to it.
import type { InspectorTransport } from '../../../protocol/inspector-api.ts';
import type { AudioLogEntry } from './audio-log.ts';

declare global {
  interface Window {
    traceInspector?: InspectorTransport;
    __traceInspectorAudioLog?: AudioLogEntry[];
  }
}
