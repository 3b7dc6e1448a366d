// Capture overhead of the engine host on the reference engine, measured in one run: the same
// passes (prefill + decodes, text and audio) with capture on (record callback, copy, announce,
// NativeBundleWriter append) and with the record callback cleared, alternating repetitions so
// drift hits both sides alike. Reports the pass-time ratio (target <= 1.3x) and the record and
// byte throughput through the worker.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineHost, type Isolation, type PassResult } from '../../engine/host/engine-host.ts';
import { captureHeader, REFERENCE_ENGINE, referenceInputs, setInputs, WEIGHTS_FILE } from '../engine-host/engine-host-fixtures.ts';

const PASSES: readonly ('prefill' | 'decode')[] = ['prefill', ...Array.from({ length: 15 }, () => 'decode' as const)];
const REPETITIONS = 20;
const WARMUP = 3;
export const TARGET_RATIO = 1.3;

interface Totals {
  /** Sum of in-worker pass durations (ti_prefill / ti_decode, callbacks included). */
  passMs: number;
  /** Sum of caller-side runPass round trips (message, pass, pass sealing, reply). */
  roundTripMs: number;
  records: number;
  bytes: number;
}

const emptyTotals = (): Totals => ({ passMs: 0, roundTripMs: 0, records: 0, bytes: 0 });

async function runOnce(host: EngineHost, capture: boolean, scratch: string, rep: number, totals: Totals): Promise<void> {
  await host.reset();
  const inputs = referenceInputs();
  if (capture) await host.beginCapture(join(scratch, `rep-${rep}`), captureHeader(host, inputs, 'bench'));
  await host.setRecordCallbackEnabled(capture);
  for (const kind of PASSES) {
    const started = performance.now();
    const result: PassResult = await host.runPass(kind);
    const roundTrip = performance.now() - started;
    if (result.status !== 'ok') throw new Error(`bench pass failed: ${JSON.stringify(result)}`);
    totals.passMs += result.durationMs;
    totals.roundTripMs += roundTrip;
    totals.records += result.recordCount;
    totals.bytes += result.bytes;
  }
  if (capture) await host.finishCapture({ status: 'completed', message: '', last_pass: PASSES.length - 1, last_boundary: null });
}

async function measure(isolation: Isolation): Promise<{ captured: Totals; bare: Totals }> {
  const scratch = mkdtempSync(join(tmpdir(), `ti-bench-${isolation}-`));
  const host = await EngineHost.start({ library: REFERENCE_ENGINE, isolation });
  try {
    await host.open({}, WEIGHTS_FILE);
    await setInputs(host, referenceInputs());
    const captured = emptyTotals();
    const bare = emptyTotals();
    for (let rep = 0; rep < WARMUP + REPETITIONS; rep++) {
      const counted = rep >= WARMUP;
      // Alternate which side goes first so neither always runs on a warmer cache.
      const order = rep % 2 === 0 ? [true, false] : [false, true];
      for (const capture of order) {
        const totals = counted ? (capture ? captured : bare) : emptyTotals();
        await runOnce(host, capture, scratch, rep, totals);
      }
    }
    return { captured, bare };
  } finally {
    await host.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

export async function benchCaptureOverhead(): Promise<string[]> {
  const lines: string[] = [];
  const passCount = PASSES.length * REPETITIONS;
  for (const isolation of ['process', 'thread'] as const) {
    const { captured, bare } = await measure(isolation);
    const ratio = captured.passMs / bare.passMs;
    const roundTripRatio = captured.roundTripMs / bare.roundTripMs;
    const seconds = captured.passMs / 1000;
    lines.push(
      `capture overhead (${isolation}): ${ratio.toFixed(2)}x pass time with capture vs record callback disabled ` +
        `(target <= ${TARGET_RATIO}x: ${ratio <= TARGET_RATIO ? 'met' : 'NOT met'}); ` +
        `${(captured.passMs / passCount).toFixed(3)} ms vs ${(bare.passMs / passCount).toFixed(3)} ms per pass over ${passCount} passes`,
      `  caller round trip per pass (incl. pass sealing): ${(captured.roundTripMs / passCount).toFixed(3)} ms vs ${(bare.roundTripMs / passCount).toFixed(3)} ms (${roundTripRatio.toFixed(2)}x)`,
      `  throughput through the worker: ${Math.round(captured.records / seconds)} records/s, ${(captured.bytes / 1e6 / seconds).toFixed(1)} MB/s ` +
        `(${captured.records / REPETITIONS} records, ${(captured.bytes / REPETITIONS / 1024).toFixed(1)} KiB per run of ${PASSES.length} passes)`,
    );
  }
  return lines;
}

// `node --import tsx tests/bench/capture-overhead.bench.ts` prints the lines on its own.
if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await benchCaptureOverhead()) console.log(line);
}
