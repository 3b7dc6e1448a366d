// The small all-number parts of the comparison records a case keeps (mismatch classes, each
// side's census, the required tolerances, the shape), held once per distinct content instead of
// once per row. A gate keeps every row's record to the end (the report and the receipt write them
// whole): at the 10 GiB scale trace's 40,899 rows these parts were four objects and 13 boxed
// doubles a row, about 18 MB of the gate process's heap at its peak, and nearly every row's are
// the same as many others' (no mismatch of any class, the same census for both sides, the same
// shapes pass after pass). Sharing an object changes no serialised byte: JSON and canonical JSON
// write its content wherever it is referenced. Each shared part is frozen, so a caller that tried
// to change one row's part (and with it every row sharing it) would throw instead.

import type { SideCensus } from '../compare/comparison-types.ts';
import { numberKey, numberListKey } from '../io/number-keys.ts';

/** The content of an object of numbers, its keys in their order; null when a value is not a number. */
function contentKey(part: object): string | null {
  let key = '{';
  for (const [name, value] of Object.entries(part)) {
    if (typeof value !== 'number') return null;
    key += `${name}:${numberKey(value)},`;
  }
  return `${key}}`;
}

interface Census {
  native: SideCensus;
  reference: SideCensus;
}

/** One empty list of notes for every record that has none. */
const NO_NOTES: string[] = Object.freeze([]) as unknown as string[];

export class SharedRecordParts {
  private readonly byContent = new Map<string, object>();

  /** `part` (an object of numbers), or the part of the same keys and values in the same order shared before it. */
  numbers<T extends object>(part: T): T {
    const key = contentKey(part);
    return key === null ? part : this.held(key, part);
  }

  /** The census of both sides: each side shared, and the pair of them shared too. */
  census(census: Census): Census {
    const native = this.numbers(census.native);
    const reference = this.numbers(census.reference);
    const sides = [contentKey(native), contentKey(reference)];
    if (sides.includes(null)) return census;
    return this.held(`census${sides.join('')}`, { native, reference });
  }

  /** An array of numbers (a shape), or the one of the same items shared before it. */
  array(items: readonly number[]): number[] {
    return this.held(numberListKey(items), items) as number[];
  }

  /** The notes, or the one shared empty list when there are none. */
  notes(notes: string[]): string[] {
    return notes.length === 0 ? NO_NOTES : notes;
  }

  private held<T extends object>(key: string, part: T): T {
    const known = this.byContent.get(key);
    if (known !== undefined) return known as T;
    this.byContent.set(key, Object.freeze(part));
    return part;
  }
}
