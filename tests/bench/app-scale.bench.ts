// The app on a large run (issue 14, items 4 and 6), in serve mode over its WebSocket API, on a
// scale-engine trace (engine/testlibs/scale_engine.c, the real LFM2.5-Audio 1.5B shapes) of
// TRACE_INSPECTOR_APP_SCALE_GIB GiB per bundle (default 10), written to TRACE_INSPECTOR_SCALE_DIR
// (default the OS temp folder) and removed after. The reference (tests/scale/scale-reference.ts)
// holds one planted error in the middle pass, so the run has a first divergence.
//   live    the app steps the scale engine pass by pass (the session captures and judges each);
//           per step: the engine's pass (its last progress event) -> the step's reply, whose
//           snapshot holds the pass's rows; for the divergent pass, against the target "first
//           divergence shown <= 1 s after the pass that holds it finishes";
//   open    the captured run opened from an empty table: openRun sent -> the first rows (the
//           first snapshot event with rows) and -> the first divergence in a snapshot, while a
//           second connection pings getSession every 10 ms (its longest round trip: the serving
//           thread's longest block, target <= 100 ms, against the idle round trip);
//   views   the heatmap (getTensorView at the renderer's grid) of the largest boundary, a zoom into
//           it, and the bit inspector (getElement) at its worst cell, each with pings alongside;
//   memory  the serve process's peak RSS (VmHWM from /proc, the judging workers are its threads)
//           against the trace's size.
// Never asserted: timings are evidence.
//   node --import tsx tests/bench/app-scale.bench.ts          npm run bench -- 'app on a large run'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_CHUNK_DIGEST_BYTES } from '../../main/core/bundle/chunk-digests.ts';
import type { InspectorEvent, SessionSnapshot } from '../../protocol/inspector-api.ts';
import { decodeRows } from '../../protocol/rows-columns.ts';
import { startServe, type ServeProcess } from '../e2e/serve-harness.ts';
import { TESTLIB_DIR } from '../helpers/paths.ts';
import { writeScaleReference } from '../scale/scale-reference.ts';
import { connectApi, pinger, type ApiClient } from './app-performance.bench.ts';
import { runOfSize } from './scale.bench.ts';

export const TARGETS = { divergenceAfterPassMs: 1000, socketBlockMs: 100, firstRowsMs: 1500 } as const;

const GIB = 2 ** 30;
/** The renderer asks for half its plot's pixels: about this grid for a 900 x 560 plot. */
const GRID = { maxRows: 280, maxCols: 450 } as const;
const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 0) : 'n/a');
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;
const met = (ok: boolean): string => (ok ? 'met' : 'MISSED');
const nowEpoch = (): number => performance.timeOrigin + performance.now();

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** VmHWM (peak resident set) of a process, in bytes. */
function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? NaN : Number(match[1]) * 1024;
}

/** The resident set now (VmRSS), in bytes. */
function currentRss(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? NaN : Number(match[1]) * 1024;
}

/**
 * Starts a new peak for `pid` (writing 5 to clear_refs resets VmHWM to the current RSS), so each
 * phase's own peak is read apart; false where the kernel refuses (the peaks then accumulate).
 */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Runs `work` with pings alongside: its wall time and the longest round trip meanwhile. */
async function withPings<T>(pinging: ApiClient, work: () => Promise<T>): Promise<{ value: T; wallMs: number; maxPingMs: number; pings: number }> {
  const ping = pinger(pinging);
  const started = performance.now();
  const value = await work();
  const wallMs = performance.now() - started;
  const rtts = await ping.stop();
  return { value, wallMs, maxPingMs: Math.max(...rtts), pings: rtts.length };
}

export async function benchAppScale(): Promise<string[]> {
  const gib = Number(process.env['TRACE_INSPECTOR_APP_SCALE_GIB'] ?? '10');
  const root = mkdtempSync(join(process.env['TRACE_INSPECTOR_SCALE_DIR'] ?? tmpdir(), 'ti-bench-app-scale-'));
  const lines = [
    `node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), ${(totalmem() / GIB).toFixed(1)} GiB RAM, load average ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')} at the start; size TRACE_INSPECTOR_APP_SCALE_GIB=${gib}`,
  ];
  let serve: ServeProcess | null = null;
  const clients: ApiClient[] = [];
  try {
    const spec = runOfSize(gib * GIB);
    const divergentPass = Math.floor(spec.passes / 2);
    let planted: string | null = null;
    let started = performance.now();
    const reference = writeScaleReference(join(root, 'reference'), {
      ...spec,
      caseId: 'scale',
      chunkBytes: DEFAULT_CHUNK_DIGEST_BYTES,
      // One element of the divergent pass's first float32 record is off by one: the engine computes
      // the value the model would, the reference states another.
      edit: (pass, name, data) => {
        if (pass !== divergentPass || planted !== null || data.byteLength < 4096 || !name.startsWith('backbone.')) return;
        const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
        view.setFloat32(1024, view.getFloat32(1024, true) + 1, true);
        planted = name;
      },
    });
    lines.push(
      `trace: ${spec.passes} passes (a 1,024-token prefill with 10 s of audio, decodes with KV-cache records), ${(reference.bytes / GIB).toFixed(2)} GiB of tensors per bundle, ` +
        `written in ${((performance.now() - started) / 1000).toFixed(0)} s; planted error: pass ${divergentPass} ${planted ?? '(none planted)'}`,
    );

    serve = await startServe();
    const events: { at: number; event: InspectorEvent }[] = [];
    const client = await connectApi(serve, (event) => events.push({ at: nowEpoch(), event }));
    const pinging = await connectApi(serve);
    clients.push(client, pinging);
    const idle = await withPings(pinging, () => new Promise((resolvePromise) => setTimeout(resolvePromise, 1000)));

    // ---- live: step the engine, judge each pass ----------------------------------------------
    await client.call('openEngine', { library: join(TESTLIB_DIR, 'libscale_engine.so') });
    await client.call('openBundle', { dir: reference.dir });
    await client.call('setEngineOptions', { options: reference.engineOptions });
    const judgedAfter: number[] = [];
    let divergence: { pass: number; afterPassMs: number; boundary: string } | null = null;
    let maxStepPing = { ms: 0, pass: -1 };
    const stepPings: number[] = [];
    let snapshot: SessionSnapshot = await client.call('getSession', {});
    started = performance.now();
    while (snapshot.nextPass !== null) {
      const pass = snapshot.nextPass;
      events.length = 0;
      const step = await withPings(pinging, () => client.call('step', {}));
      snapshot = step.value;
      stepPings.push(step.maxPingMs);
      if (step.maxPingMs > maxStepPing.ms) maxStepPing = { ms: step.maxPingMs, pass };
      const repliedAt = nowEpoch();
      const lastProgress = events.filter((entry) => entry.event.type === 'progress').at(-1)?.at;
      if (lastProgress !== undefined) judgedAfter.push(repliedAt - lastProgress);
      if (divergence === null && snapshot.firstDivergence !== null) {
        divergence = { pass, afterPassMs: lastProgress === undefined ? NaN : repliedAt - lastProgress, boundary: snapshot.firstDivergence.boundary };
      }
      if (snapshot.run.status !== 'running') break;
    }
    const liveSeconds = (performance.now() - started) / 1000;
    const phasePeaks: [string, number][] = [['live stepping', peakRss(serve.pid)]];
    const peaksApart = resetPeak(serve.pid);
    const nativeDir = /captured into (\S+)$/.exec(snapshot.run.message)?.[1] ?? '';
    lines.push('');
    lines.push(
      `live: ${snapshot.timeline.filter((pass) => pass.state === 'done').length} passes stepped in ${liveSeconds.toFixed(0)} s (${snapshot.run.status}), ${snapshot.rowCount} rows; native run in ${nativeDir}`,
    );
    lines.push(
      `    engine's pass done (its last progress event) -> step reply with the pass judged: median ${ms(median(judgedAfter))} ms, max ${ms(Math.max(...judgedAfter))} ms over ${judgedAfter.length} steps; ` +
        `longest getSession round trip during the steps ${ms(maxStepPing.ms)} ms (in the step of pass ${maxStepPing.pass}; a step's longest: median ${ms(median(stepPings))} ms, ` +
        `${stepPings.filter((value) => value > TARGETS.socketBlockMs).length} of ${stepPings.length} steps over ${TARGETS.socketBlockMs} ms; idle: up to ${ms(idle.maxPingMs)} ms over ${idle.pings})`,
    );
    // Whether a step's cost grows with the run: the first steps' median against the last ones'
    // (the last step, which finishes the capture, apart).
    const beforeLast = judgedAfter.slice(0, -1);
    lines.push(
      `    per step: median of steps 1-10 ${ms(median(beforeLast.slice(1, 11)))} ms, of the 10 before the last ${ms(median(beforeLast.slice(-10)))} ms; ` +
        `the last step (the capture finished) ${ms(judgedAfter.at(-1) ?? NaN)} ms, its longest getSession round trip ${ms(stepPings.at(-1) ?? NaN)} ms`,
    );
    lines.push(
      divergence === null
        ? '    MOONSHOT first divergence <= 1 s after its pass: no divergence was found (the planted error did not show)'
        : `    MOONSHOT first divergence <= ${TARGETS.divergenceAfterPassMs} ms after the pass that holds it: pass ${divergence.pass} ${divergence.boundary} shown ${ms(divergence.afterPassMs)} ms after the pass finished ` +
            `(${(divergence.afterPassMs / TARGETS.divergenceAfterPassMs).toFixed(2)}x) [${met(divergence.afterPassMs <= TARGETS.divergenceAfterPassMs)}]`,
    );

    // ---- open: the captured run from an empty table ---------------------------------------------
    const emptied = await client.call('openBundle', { dir: reference.dir });
    events.length = 0;
    const sentAt = nowEpoch();
    const open = await withPings(pinging, () => client.call('openRun', { dir: nativeDir }));
    const snapshots = events.flatMap((entry) =>
      entry.event.type === 'snapshot' && entry.event.snapshot.rowsVersion !== emptied.rowsVersion ? [{ at: entry.at, snapshot: entry.event.snapshot }] : [],
    );
    const firstRows = snapshots.find((entry) => entry.snapshot.rowCount > 0);
    const firstDivergence = snapshots.find((entry) => entry.snapshot.firstDivergence !== null);
    const rows = await withPings(pinging, () => client.call('getRows', {}));
    phasePeaks.push(['opening the captured run', peakRss(serve.pid)]);
    if (peaksApart) resetPeak(serve.pid);
    lines.push('');
    lines.push(
      `open the captured run (${open.value.rowCount} rows, ${open.value.timeline.length} passes; manifests read on the judging workers, rows streamed as judged):`,
    );
    lines.push(
      `    openRun sent -> first rows in a snapshot ${firstRows === undefined ? 'n/a' : ms(firstRows.at - sentAt)} ms [target <= ${TARGETS.firstRowsMs} ms: ${met(firstRows !== undefined && firstRows.at - sentAt <= TARGETS.firstRowsMs)}]; ` +
        `-> first divergence in a snapshot ${firstDivergence === undefined ? 'n/a' : `${ms(firstDivergence.at - sentAt)} ms (${firstDivergence.snapshot.firstDivergence?.boundary ?? ''}, pass ${firstDivergence.snapshot.firstDivergence?.pass ?? ''})`}; ` +
        `-> every row judged (openRun reply) ${ms(open.wallMs)} ms`,
    );
    lines.push(
      `    TARGET socket never blocked > ${TARGETS.socketBlockMs} ms: longest getSession round trip during the open ${ms(open.maxPingMs)} ms over ${open.pings} pings ` +
        `(${(open.maxPingMs / TARGETS.socketBlockMs).toFixed(2)}x the target; idle round trips up to ${ms(idle.maxPingMs)} ms) [${met(open.maxPingMs <= TARGETS.socketBlockMs)}]`,
    );
    lines.push(`    getRows of every row (a new client's first fetch): ${ms(rows.wallMs)} ms, pings up to ${ms(rows.maxPingMs)} ms`);

    // ---- views: the largest boundary's heatmap, a zoom, the bit inspector ---------------------------
    const allRows = decodeRows(rows.value);
    const largest = allRows.reduce((best, row) => (row.elements > best.elements ? row : best), allRows[0] ?? { pass: 0, boundary: '', elements: 0, dtype: '' });
    const shown = largest.elements * 4;
    const view = await withPings(pinging, () => client.call('getTensorView', { pass: largest.pass, boundary: largest.boundary, metric: 'abs_diff', ...GRID }));
    const { folded } = view.value;
    const zoomWindow = {
      row0: Math.floor(folded.rows / 4),
      row1: Math.floor(folded.rows / 4) + Math.min(64, folded.rows),
      col0: 0,
      col1: Math.min(256, folded.cols),
    };
    const zoom = await withPings(pinging, () =>
      client.call('getTensorView', { pass: largest.pass, boundary: largest.boundary, metric: 'abs_diff', ...GRID, window: zoomWindow }),
    );
    const element = await withPings(pinging, () =>
      client.call('getElement', { pass: largest.pass, boundary: largest.boundary, flatIndex: Math.floor(largest.elements / 2) }),
    );
    lines.push('');
    lines.push(`views of the largest boundary, pass ${largest.pass} ${largest.boundary} (${largest.dtype}, ${(shown / 2 ** 20).toFixed(1)} MiB per side):`);
    lines.push(
      `    heatmap ${view.value.grid.rows}x${view.value.grid.cols} cells of ${folded.rows}x${folded.cols}: ${ms(view.wallMs)} ms, pings up to ${ms(view.maxPingMs)} ms`,
    );
    lines.push(
      `    zoom rows ${zoomWindow.row0}..${zoomWindow.row1} x cols ${zoomWindow.col0}..${zoomWindow.col1}: ${ms(zoom.wallMs)} ms, pings up to ${ms(zoom.maxPingMs)} ms`,
    );
    lines.push(`    bit inspector (one element, read by its chunk): ${ms(element.wallMs)} ms, pings up to ${ms(element.maxPingMs)} ms`);

    phasePeaks.push(['the views', peakRss(serve.pid)]);
    const peak = Math.max(...phasePeaks.map(([, bytes]) => bytes));
    const bundles = 2 * reference.bytes;
    lines.push('');
    lines.push(
      `memory: serve process peak RSS ${mb(peak)} (judging workers included, they are its threads) for ${(bundles / GIB).toFixed(1)} GiB of bundles (${((peak / bundles) * 100).toFixed(2)}%), ${open.value.rowCount} rows`,
    );
    lines.push(
      `    peak of each phase${peaksApart ? '' : ' (VmHWM could not be reset: each includes the phases before)'}: ${phasePeaks.map(([phase, bytes]) => `${phase} ${mb(bytes)}`).join(', ')}; resident at the end ${mb(currentRss(serve.pid))}`,
    );
  } finally {
    for (const client of clients) client.close();
    await serve?.stop();
    // The session's captures went to serve's work folder.
    if (serve !== null) rmSync(serve.workDir, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  }
  return lines;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of await benchAppScale()) process.stdout.write(`${line}\n`);
}
