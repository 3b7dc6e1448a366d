// Which boundaries carry listenable PCM: the rows say so (BoundaryRow.pcm, decided by the core
// from the reference bundle, the same rule the audio service enforces), so nothing is guessed
// from names here. The detokenizer's output is the default because it is what users hear, and
// it is offered before any pass has run: the reference side is playable on its own.
import type { BoundaryRow } from '../../../../protocol/inspector-api.ts';

export const DEFAULT_PCM_BOUNDARY = 'detok.pcm';

export function isPcmRow(row: Pick<BoundaryRow, 'pcm'>): boolean {
  return row.pcm;
}

export function pcmBoundaries(rows: readonly BoundaryRow[]): string[] {
  const names = new Set<string>();
  for (const row of rows) if (isPcmRow(row)) names.add(row.boundary);
  const sorted = [...names].sort();
  // The default first, whether or not a pass has emitted it yet.
  return [DEFAULT_PCM_BOUNDARY, ...sorted.filter((name) => name !== DEFAULT_PCM_BOUNDARY)];
}
