// How a client applies a getRows reply to the rows it holds (inspector-api.ts documents the
// modes). Shared by the renderer's store and the session tests, which prove that merging the
// appends of a run reproduces the full list exactly.
import type { BoundaryRow, RowsReply } from './inspector-api.ts';

/**
 * The rows after `reply`, or null when an append does not continue `held` (the rows were not the
 * ones the reply assumed, e.g. after a reconnect to a restarted core): then ask for every row.
 * A reply that appends nothing returns `held` itself, so nothing downstream re-renders.
 */
export function mergeRows(held: BoundaryRow[], reply: RowsReply): BoundaryRow[] | null {
  if (reply.mode === 'full') return [...reply.rows].sort((a, b) => a.order - b.order);
  // Appended rows are the next ones in execution order: their `order` continues the held rows'.
  const continues = reply.rows.every((row, i) => row.order === held.length + i);
  if (!continues) return null;
  return reply.rows.length === 0 ? held : [...held, ...reply.rows];
}
