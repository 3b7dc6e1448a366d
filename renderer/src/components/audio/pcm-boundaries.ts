// Which boundaries carry listenable PCM: the rows say so (BoundaryRow.pcm, decided by the core
// from the reference bundle, the same rule the audio service enforces), so nothing is guessed
// from names here: only the boundaries the reference declares audio are listed, so an engine
// without audio gets none. The reference model's detokenizer output comes first when it is one
// (it is what users hear); rows exist before any pass has run, the reference side being playable
// on its own.
import type { BoundaryRow } from '../../../../protocol/inspector-api.ts';

export const DEFAULT_PCM_BOUNDARY = 'detok.pcm';

export function isPcmRow(row: Pick<BoundaryRow, 'pcm'>): boolean {
  return row.pcm;
}

export function pcmBoundaries(rows: readonly BoundaryRow[]): string[] {
  const names = new Set<string>();
  for (const row of rows) if (isPcmRow(row)) names.add(row.boundary);
  const sorted = [...names].sort();
  return names.has(DEFAULT_PCM_BOUNDARY) ? [DEFAULT_PCM_BOUNDARY, ...sorted.filter((name) => name !== DEFAULT_PCM_BOUNDARY)] : sorted;
}
