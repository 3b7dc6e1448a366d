// Runs a native engine over a reference bundle's case — its inputs, then prefill and as many
// decode passes as the reference has — and captures every record into a native bundle.
// The engine runs in an isolated engine-host process by default, so a crash or hang ends the
// run with what was captured, never the caller.
import { mkdir, readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { EngineCallError } from '../../../engine/host/engine-errors.ts';
import { EngineHost, type Isolation, type PassResult } from '../../../engine/host/engine-host.ts';
import { openBundle, resolveWeights, type TraceBundle } from '../bundle/bundle-reader.ts';
import type { BundleManifest, RunOutcome } from '../bundle/manifest-schema.ts';
import type { NativeCaptureHeader } from '../bundle/native-bundle-writer.ts';
import { toolInfo } from '../tool/tool-info.ts';

export interface CaptureOptions {
  /** Engine shared library. */
  library: string;
  /** The reference bundle whose case is run. */
  referenceDir: string;
  /** Where the native bundle is written; must not exist or be empty. */
  outDir: string;
  /** Weights file; default: the reference's provenance.model.weights_file (digest-checked). */
  weightsPath?: string;
  isolation?: Isolation;
  passTimeoutMs?: number;
  /** Engine options set before the run (perturbations, knobs). */
  options?: Readonly<Record<string, string>>;
  /** The command line that asked for this capture, recorded in provenance. */
  command: string;
  onPass?: (result: PassResult) => void;
}

export interface CaptureResult {
  reference: TraceBundle;
  /** manifest.json of the native bundle (complete or recovered); null if none could be written. */
  manifestPath: string | null;
  run: RunOutcome;
  passes: PassResult[];
}

/** Refuses to write evidence over anything: the target must be absent or an empty folder. */
async function assertFreshTarget(outDir: string): Promise<void> {
  try {
    const entries = await readdir(outDir);
    if (entries.length > 0) {
      throw new CaptureUsageError(`--out ${outDir}: the folder exists and is not empty; captures never write over existing data`);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** A capture that cannot start because of how it was asked for (exit code 2). */
export class CaptureUsageError extends Error {
  override name = 'CaptureUsageError';
}

function nativeHeader(reference: BundleManifest, host: EngineHost, command: string, inputs: NativeCaptureHeader['inputs']): NativeCaptureHeader {
  const tool = toolInfo();
  const engine = host.description.engine;
  return {
    kind: 'native',
    case: reference.case,
    provenance: {
      model: reference.provenance.model,
      generator: {
        implementation: `trace-inspector ${tool.version} capture`,
        revision: tool.commit === 'unknown' ? '0000000' : tool.commit,
        dirty: tool.dirty,
        command,
      },
      runtime: {
        node: process.version,
        engine_name: engine.name,
        engine_version: engine.version,
        engine_build_id: engine.build_id,
        engine_library_sha256: host.librarySha256,
        engine_abi_version: host.description.abi_version,
        engine_library: host.library,
      },
      precision: 'native',
      created_at: new Date().toISOString(),
    },
    inputs,
  };
}

function outcomeOf(result: PassResult, lastBoundary: string | null): RunOutcome {
  switch (result.status) {
    case 'ok':
      return { status: 'completed', message: '', last_pass: result.index, last_boundary: lastBoundary };
    case 'engine_error':
      return {
        status: 'engine_error',
        message: `${result.code}: ${result.message}`,
        last_pass: result.index,
        last_boundary: result.lastBoundary,
      };
    case 'crashed':
      return { status: 'crashed', message: result.message, last_pass: result.index, last_boundary: result.lastBoundary };
    case 'timeout':
      return { status: 'timeout', message: result.message, last_pass: result.index, last_boundary: result.lastBoundary };
  }
}

/** An engine refusing what it was given before any pass ran is invalid input, not a failed run. */
async function refusedAsUsage(what: string, call: () => Promise<void>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (error instanceof EngineCallError) throw new CaptureUsageError(`the engine refused ${what}: ${error.message}`);
    throw error;
  }
}

export async function captureRun(options: CaptureOptions): Promise<CaptureResult> {
  const reference = await openBundle(resolve(options.referenceDir));
  const outDir = resolve(options.outDir);
  await assertFreshTarget(outDir);
  const weightsPath = options.weightsPath ? resolve(options.weightsPath) : await resolveWeights(reference);

  const host = await EngineHost.start({
    library: options.library,
    isolation: options.isolation ?? 'process',
    ...(options.passTimeoutMs !== undefined ? { passTimeoutMs: options.passTimeoutMs } : {}),
  });
  const passes: PassResult[] = [];
  try {
    await refusedAsUsage(`opening a session with weights ${weightsPath}`, () => host.open({}, weightsPath));
    for (const [key, value] of Object.entries(options.options ?? {})) {
      await refusedAsUsage(`option ${key}=${value}`, () => host.setOption(key, value));
    }
    const inputs: NativeCaptureHeader['inputs'] = [];
    for (const entry of reference.manifest.inputs) {
      const tensor = await reference.readInput(entry.name);
      await refusedAsUsage(`input ${entry.name} of ${reference.manifestPath}`, () =>
        host.setInput(entry.name, { dtype: tensor.dtype, shape: tensor.shape, data: tensor.data }),
      );
      inputs.push({ name: entry.name, dtype: tensor.dtype, shape: [...tensor.shape], data: tensor.data });
    }
    await mkdir(outDir, { recursive: true });
    await host.beginCapture(outDir, nativeHeader(reference.manifest, host, options.command, inputs));

    let lastBoundary: string | null = null;
    host.onRecord((event) => {
      lastBoundary = event.name;
    });
    let run: RunOutcome = { status: 'completed', message: '', last_pass: null, last_boundary: null };
    for (const pass of reference.passes) {
      const result = await host.runPass(pass.kind);
      passes.push(result);
      options.onPass?.(result);
      run = outcomeOf(result, lastBoundary);
      if (result.status !== 'ok') break;
    }
    const last = passes.at(-1);
    if (last === undefined || last.status === 'ok' || last.status === 'engine_error') {
      const manifestPath = await host.finishCapture(run);
      return { reference, manifestPath, run, passes };
    }
    // The engine-host process died: the host recovered the bundle from its journal.
    return { reference, manifestPath: last.recoveredManifest, run, passes };
  } finally {
    await host.close().catch(() => undefined);
  }
}
