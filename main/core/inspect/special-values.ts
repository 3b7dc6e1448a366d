// The special-values panel of one boundary: the census of each side (NaN, +inf, -inf, -0,
// subnormal, finite) and the mismatches classified under the boundary's contract from the
// reference manifest, in element order.
//
// compareBoundary is the authority: the census and the counts per class are its own (tie
// analysis and padding included). The list walks the elements with the comparator's own
// contract tests (element-classes.ts) and relabels 'value' as 'tie_order' exactly when
// compareBoundary did. When compareBoundary judged the whole boundary a layout error (native is
// the reference with its axes permuted) it reports no element classes; the panel then counts
// the list's own classes, the element-wise view a reviewer still wants to see.
// With no native record, the reference's census comes from comparing the reference with itself
// (the comparator's census code, no second one) and there are no mismatches.
import type { TraceBundle } from '../bundle/bundle-reader.ts';
import { DTYPE_SIZE } from '../bundle/dtype.ts';
import type { BoundaryRef, SpecialMismatch, SpecialsValue } from './view-values.ts';
import { compareBoundary } from '../compare/compare-boundary.ts';
import { C_NONE, C_TIE_ORDER, C_VALUE, classOf, MISMATCH_CLASSES, unravel } from '../compare/compare-kernels.ts';
import type { MismatchClass, SideCensus } from '../compare/comparison-types.ts';
import { boundarySides, requirePaired, where } from './boundary-sides.ts';
import { ElementClassifier, sideBits, validAt } from './element-classes.ts';
import { elementBits } from './element-format.ts';
import { rowAlignedWindow, streamWindows } from './window-stream.ts';

const NO_CENSUS: SideCensus = { nan: 0, posInf: 0, negInf: 0, negZero: 0, subnormal: 0, finite: 0 };

function noClasses(): Record<MismatchClass, number> {
  const out = {} as Record<MismatchClass, number>;
  for (const name of MISMATCH_CLASSES) out[name] = 0;
  return out;
}

export async function specials(native: TraceBundle | null, reference: TraceBundle, ref: BoundaryRef, limit: number): Promise<SpecialsValue> {
  const { pass, boundary } = ref;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`${where(pass, boundary)}: limit must be a positive integer, got ${limit}`);
  const sides = boundarySides(native, reference, pass, boundary);
  const referenceEntry = sides.reference;
  if (referenceEntry === null)
    throw new Error(
      `${where(pass, boundary)}: special values are judged under the reference's contract, and ${sides.unpaired ?? 'the reference has no record of it'}`,
    );
  const contract = referenceEntry.contract;
  if (contract === null) throw new Error(`${where(pass, boundary)}: the reference bundle (${reference.dir}) declares no contract for it`);

  if (native === null || sides.native === null) {
    const self = await compareBoundary({ native: reference, reference }, pass, boundary);
    return { pass, boundary, census: { native: { ...NO_CENSUS }, reference: self.census.reference }, byClass: noClasses(), mismatches: [], truncated: false };
  }
  requirePaired(sides, 'the special-values list');
  const result = await compareBoundary({ native, reference }, pass, boundary);
  const ownCounts = result.structural !== null;
  const tieOrder = result.classes.tie_order > 0;

  const classifier = new ElementClassifier(sides.dtype, sides.shape, contract);
  const counts = new Array<number>(MISMATCH_CLASSES.length + 1).fill(0);
  const mismatches: SpecialMismatch[] = [];
  const elementBytes = DTYPE_SIZE[sides.dtype];
  const windowElements = rowAlignedWindow(elementBytes, 0);
  const valid = referenceEntry.valid;
  const full = (): boolean => mismatches.length >= limit && !ownCounts;
  if (result.mismatches > 0 || ownCounts) {
    await streamWindows(
      native,
      reference,
      { pass, name: boundary, elementBytes, elements: sides.elements, windowElements, priority: 'background' },
      (window) => {
        const n = sideBits(sides.dtype, window.native as Uint8Array);
        const r = sideBits(sides.dtype, window.reference as Uint8Array);
        for (let e = 0; e < window.count; e++) {
          const flat = window.start + e;
          let code: number;
          if (validAt(valid, sides.shape, flat)) code = classifier.valueCode(n, r, e);
          else if (valid?.padding === 'zero') code = classifier.paddingCode(n, e);
          else code = C_NONE;
          if (code === C_NONE) continue;
          if (tieOrder && code === C_VALUE) code = C_TIE_ORDER;
          counts[code] = (counts[code] as number) + 1;
          if (mismatches.length < limit) {
            const nativeBits = elementBits(sides.dtype, n.bytes, e * elementBytes);
            const referenceBits = elementBits(sides.dtype, r.bytes, e * elementBytes);
            mismatches.push({
              flatIndex: flat,
              index: unravel(flat, sides.shape),
              class: classOf(code),
              reference: referenceBits.decimal,
              native: nativeBits.decimal,
              referenceBits: referenceBits.hex,
              nativeBits: nativeBits.hex,
            });
          }
          // Enough listed: compareBoundary has already read (and verified) every byte.
          if (full()) return 'stop';
        }
        return undefined;
      },
    );
  }

  let byClass = result.classes;
  let total = result.mismatches;
  if (ownCounts) {
    byClass = noClasses();
    MISMATCH_CLASSES.forEach((name, i) => (byClass[name] = counts[i + 1] as number));
    total = counts.reduce((sum, count) => sum + count, 0);
  }
  return {
    pass,
    boundary,
    census: { native: result.census.native, reference: result.census.reference },
    byClass,
    mismatches,
    truncated: total > mismatches.length,
  };
}
