// How a client applies a getRows reply to the rows it holds (inspector-api.ts documents the
// modes). Shared by the renderer's store and the session tests, which prove that merging the
// appends of a run reproduces the full list exactly.
import type { BoundaryRow, RowsReply } from './inspector-api.ts';
import { decodeRows } from './rows-columns.ts';

/**
 * The rows after `reply`, or null when an append does not continue `held` (the rows were not the
 * ones the reply assumed, e.g. after a reconnect to a restarted core): then ask for every row.
 * A reply that appends nothing returns `held` itself, so nothing downstream re-renders.
 */
export function mergeRows(held: BoundaryRow[], reply: RowsReply): BoundaryRow[] | null {
  // Columns are in execution order and a full reply starts at 0 (the schema checks it).
  if (reply.mode === 'full') return decodeRows(reply);
  // Appended rows are the next ones in execution order: their `order` continues the held rows'.
  if (reply.start !== held.length) return null;
  return reply.count === 0 ? held : held.concat(decodeRows(reply));
}
