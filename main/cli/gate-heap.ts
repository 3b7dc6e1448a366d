// The `--gate` process's V8 heap, held close to what is live (issue 14: every process of the
// gate <= 300 MB; docs/performance.md, "the gate process's memory").
//
// On a 4 GiB trace the gate's live heap stays at 50 to 80 MB, yet its heap grew to 150 to 160 MB:
// V8 let the young generation grow to two semi-spaces of 16 MiB, and the old one to two or three
// times what survived the last full collection, before collecting. With two hashing workers and
// the comparison's buffers that put the process at 290 to 340 MB. The gate's main thread mostly
// waits (on the hashing workers, the engine host, the disk), so collecting sooner costs it little
// time (measured against parallel sha256sum: docs/performance.md).
//
// Both flags are read by V8 each time it sizes a space, so setting them once the process runs
// takes effect (the semi-space and old-space maximums are fixed when the heap is set up and would
// need the process started with them); heap-bounds.ts keeps them set across worker starts:
// - semi-space-growth-factor=1: the young generation keeps the capacity it has when the gate
//   starts (a few MB once the CLI is loaded), never doubled up to 2 x 16 MiB;
// - heap-growing-percent: the old generation may grow by this share of what survived the last
//   full collection before the next one (V8 picks up to 300% on its own). 20, not 50: at 10 GiB
//   the gate's peak is at its end, where the receipt is written while the manifests' parses are
//   garbage not yet collected; with 50 the heap grew around them (10 GiB gate, one run each:
//   325 MB with 50, 313 MB with 20; docs/performance.md, "the gate process's memory at 10 GiB").
import { boundHeapGrowth } from '../core/tool/heap-bounds.ts';

/** The flags, each `--name=value`. */
export const GATE_HEAP_FLAGS = ['--semi-space-growth-factor=1', '--heap-growing-percent=20'] as const;

/** Bounds this process's heap growth as above; for the `--gate` command only (its own process). */
export function boundGateHeapGrowth(): void {
  boundHeapGrowth(GATE_HEAP_FLAGS);
}
