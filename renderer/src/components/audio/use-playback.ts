// Which sound is playing, as React state, and a play function whose failures go to the error list.
import { useEffect, useState } from 'react';
import { errorMessage, pushLocalError } from '../../store/actions/error-actions.ts';
import { onPlaybackChange, play, type LoopRegion, type PlayKind } from './audio-player.ts';

export function usePlayback(): {
  playing: PlayKind | null;
  start: (kind: PlayKind, samples: Float32Array<ArrayBuffer>, sampleRate: number, loop: LoopRegion | null) => void;
} {
  const [playing, setPlaying] = useState<PlayKind | null>(null);
  useEffect(() => onPlaybackChange(setPlaying), []);
  const start = (kind: PlayKind, samples: Float32Array<ArrayBuffer>, sampleRate: number, loop: LoopRegion | null): void => {
    play(kind, samples, sampleRate, loop).catch((error: unknown) => pushLocalError(`play ${kind}`, errorMessage(error)));
  };
  return { playing, start };
}
