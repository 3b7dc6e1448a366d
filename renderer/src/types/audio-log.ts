// One entry per WebAudio buffer source that really finished playing (the e2e tests read it).
export interface AudioLogEntry {
  what: 'reference' | 'native' | 'residual' | 'x';
  frames: number;
  sampleRate: number;
  endedAt: number;
}
