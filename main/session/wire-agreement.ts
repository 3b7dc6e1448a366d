// The wire format (protocol/) imports nothing of ours, so it spells out the verdicts and the
// mismatch classes that the core defines (main/core/gate/gate-types.ts VERDICTS,
// main/core/compare/comparison-types.ts MismatchClass). This module sits where both are
// visible and makes the type check fail when the two lists differ in either direction, so
// the wire cannot drift from the core. It has no run-time content.
import type { WireMismatchClass, WireVerdict } from '../../protocol/inspector-api.ts';
import type { MismatchClass } from '../core/compare/comparison-types.ts';
import type { Verdict } from '../core/gate/gate-types.ts';

/** true when A and B are the same union, a compile error otherwise. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;

export const VERDICTS_AGREE: Same<Verdict, WireVerdict> = true;
export const MISMATCH_CLASSES_AGREE: Same<MismatchClass, WireMismatchClass> = true;
