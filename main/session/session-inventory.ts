// The inventory of a reference bundle's evidence in a session, derived from the gate's verdicts
// (never from a second comparison, so it cannot disagree with the rows the user sees):
//   consumed     the reference inputs given to the engine, and every reference record that was
//                compared with a native record;
//   notConsumed  reference records not compared: their pass has not run, the engine never
//                emitted them (the verdict says why: the catalogue, a crash...), no contract;
//   rejected     records that could not be compared: a structural mismatch (dtype, shape,
//                layout, with the comparator's detail) or unreadable evidence (a digest failure).
// Records are named like the session's boundary rows, `${pass}:${boundary}`, inputs `input:${name}`.
import type { Provenance } from '../../protocol/inspector-api.ts';
import type { TraceBundle } from '../core/bundle/bundle-reader.ts';
import type { BoundaryEntry, PassEntry } from '../core/bundle/manifest-schema.ts';
import type { SessionVerdict } from './judge-messages.ts';

export type Inventory = Provenance['inventory'];

export interface InventoryInput {
  reference: TraceBundle;
  /** Whether the engine has been given the inputs (a native run exists or a pass ran). */
  engineStarted: boolean;
  verdicts: readonly SessionVerdict[];
  passesRun: readonly number[];
}

type Placement = { list: 'consumed'; what: string } | { list: 'notConsumed' | 'rejected'; why: string };

const shapeText = (shape: readonly number[]): string => `[${shape.join(', ')}]`;

/** Where one reference record goes, given its verdict (undefined: not judged). */
function place(pass: PassEntry, entry: BoundaryEntry, verdict: SessionVerdict | undefined, passRan: boolean): Placement {
  const described = `${entry.dtype} ${shapeText(entry.shape)}`;
  if (verdict === undefined) {
    if (entry.contract === null) return { list: 'notConsumed', why: 'no contract: the reference declares none, so it cannot be judged' };
    if (!passRan) return { list: 'notConsumed', why: `pass ${pass.index} (${pass.kind}) has not run yet` };
    return { list: 'notConsumed', why: `pass ${pass.index} ran but this record has not been judged` };
  }
  // Unreadable evidence first: a record whose bytes failed their digest was never compared.
  if (verdict.kind === 'unreadable') return { list: 'rejected', why: verdict.reason };
  const structural = verdict.reference?.structural ?? null;
  if (structural !== null && structural.problem !== 'missing') {
    return { list: 'rejected', why: `${structural.problem} mismatch: ${structural.detail}` };
  }
  if (!verdict.inNative || structural?.problem === 'missing') {
    return { list: 'notConsumed', why: `the engine never emitted it: ${verdict.reason}` };
  }
  if (verdict.reference === null) return { list: 'rejected', why: verdict.reason };
  if (entry.contract === null) return { list: 'notConsumed', why: `no contract: ${verdict.reason}` };
  return { list: 'consumed', what: `record ${described}, compared under its contract: ${verdict.verdict}` };
}

export function inventoryOf(input: InventoryInput): Inventory {
  const inventory: Inventory = { consumed: [], notConsumed: [], rejected: [] };
  for (const entry of input.reference.manifest.inputs) {
    const name = `input:${entry.name}`;
    if (input.engineStarted) inventory.consumed.push({ name, what: `input given to the engine: ${entry.dtype} ${shapeText(entry.shape)}` });
    else inventory.notConsumed.push({ name, why: 'not given to the engine yet: no pass has run' });
  }
  // Only verdicts about reference records: native records the reference lacks are not its evidence.
  const byRecord = new Map<string, SessionVerdict>();
  for (const verdict of input.verdicts) if (verdict.inReference) byRecord.set(`${verdict.pass}:${verdict.boundary}`, verdict);
  const ran = new Set(input.passesRun);
  for (const pass of input.reference.passes) {
    for (const entry of pass.boundaries) {
      const name = `${pass.index}:${entry.name}`;
      const placement = place(pass, entry, byRecord.get(name), ran.has(pass.index));
      if (placement.list === 'consumed') inventory.consumed.push({ name, what: placement.what });
      else inventory[placement.list].push({ name, why: placement.why });
    }
  }
  return inventory;
}
