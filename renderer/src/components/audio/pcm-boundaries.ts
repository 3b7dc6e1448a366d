// Which boundaries carry listenable PCM: one-dimensional F32 streams named like audio. The
// detokenizer's output is the default because it is what users hear.
import type { BoundaryRow } from '../../../../preload/inspector-api.ts';

export const DEFAULT_PCM_BOUNDARY = 'detok.pcm';
const PCM_NAME = /pcm|resampled|preemph|wave|audio_out/i;

export function isPcmRow(row: Pick<BoundaryRow, 'boundary' | 'dtype' | 'shape'>): boolean {
  return row.dtype === 'F32' && row.shape.length === 1 && PCM_NAME.test(row.boundary);
}

export function pcmBoundaries(rows: readonly BoundaryRow[]): string[] {
  const names = new Set<string>();
  for (const row of rows) if (isPcmRow(row)) names.add(row.boundary);
  const sorted = [...names].sort();
  // The default first, whether or not a pass has emitted it yet.
  return [DEFAULT_PCM_BOUNDARY, ...sorted.filter((name) => name !== DEFAULT_PCM_BOUNDARY)];
}
