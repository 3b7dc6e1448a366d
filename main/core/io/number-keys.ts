// Content keys of numbers, for sharing one frozen copy of equal values (manifest shapes and
// strides, the gate's comparison-record parts). Two values share a key only when they serialise
// alike: -0 is kept apart from 0 (JSON.parse keeps it, and a record's census may hold it), NaN and
// the infinities are spelled by name.

/** A number's spelling in a content key. */
export const numberKey = (value: number): string => (Object.is(value, -0) ? '-0' : String(value));

/** The content key of a list of numbers, its items in their order. */
export function numberListKey(items: readonly number[]): string {
  let key = '[';
  for (const item of items) key += `${numberKey(item)},`;
  return key;
}
