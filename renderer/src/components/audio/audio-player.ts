// Playback through WebAudio: one AudioBufferSourceNode at a time, at the PCM's own sample rate
// (WebAudio resamples to the device). Every source that really ended is appended to
// window.__traceInspectorAudioLog, so an end-to-end test can prove the audio graph ran.
import type { AudioLogEntry } from '../../types/audio-log.ts';

export type PlayKind = AudioLogEntry['what'];

export interface LoopRegion {
  /** Seconds. */
  start: number;
  end: number;
}

let context: AudioContext | null = null;
let playing: { source: AudioBufferSourceNode; kind: PlayKind } | null = null;
const listeners = new Set<(kind: PlayKind | null) => void>();

function audioLog(): AudioLogEntry[] {
  window.__traceInspectorAudioLog ??= [];
  return window.__traceInspectorAudioLog;
}

function notify(): void {
  for (const listener of listeners) listener(playing?.kind ?? null);
}

/** Which sound is playing now (null: silence); the listener is called on every change. */
export function onPlaybackChange(listener: (kind: PlayKind | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function stopPlayback(): void {
  // stop() fires 'ended', which logs the entry and clears `playing`.
  playing?.source.stop();
}

export async function play(kind: PlayKind, samples: Float32Array<ArrayBuffer>, sampleRate: number, loop: LoopRegion | null): Promise<void> {
  if (samples.length === 0) throw new Error(`there are no ${kind} samples to play`);
  // Created on first use, inside a user gesture, so autoplay policies let it run.
  context ??= new AudioContext();
  if (context.state === 'suspended') await context.resume();
  stopPlayback();
  const buffer = context.createBuffer(1, samples.length, sampleRate);
  buffer.copyToChannel(samples, 0);
  const source = context.createBufferSource();
  source.buffer = buffer;
  source.connect(context.destination);
  const entry = { source, kind };
  source.addEventListener('ended', () => {
    audioLog().push({ what: kind, frames: samples.length, sampleRate, endedAt: performance.now() });
    if (playing === entry) {
      playing = null;
      notify();
    }
  });
  playing = entry;
  notify();
  if (loop !== null && loop.end > loop.start) {
    source.loop = true;
    source.loopStart = loop.start;
    source.loopEnd = loop.end;
    source.start(0, loop.start);
  } else {
    source.start();
  }
}
