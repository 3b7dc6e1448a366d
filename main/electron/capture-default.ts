// Captures the embedded default (reference engine over the default case) into a fresh temp
// folder and returns the per-boundary summary the window shows.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBundle } from '../core/bundle/bundle-reader.ts';
import { diffCapture, summarizeCaptureDiff } from '../core/capture/capture-diff.ts';
import { captureRun } from '../core/capture/capture-run.ts';
import { embeddedDefaults } from '../core/tool/tool-info.ts';
import type { CaptureSummaryMessage } from '../../preload/inspector-api.ts';

export async function captureDefaultCase(): Promise<CaptureSummaryMessage> {
  const defaults = embeddedDefaults();
  const outDir = join(await mkdtemp(join(tmpdir(), 'trace-inspector-')), 'native');
  const result = await captureRun({
    library: defaults.engineLibrary,
    referenceDir: join(defaults.bundlesDir, defaults.defaultCase, 'reference'),
    outDir,
    command: 'trace-inspector (desktop) capture default',
  });
  if (result.manifestPath === null) {
    await result.reference.close();
    return { caseId: defaults.defaultCase, outDir, run: result.run, rows: [], summary: null };
  }
  const native = await openBundle(outDir);
  try {
    const rows = await diffCapture(native, result.reference);
    return {
      caseId: result.reference.manifest.case.id,
      outDir,
      run: result.run,
      rows: rows.map((row) => ({
        pass: row.pass,
        boundary: row.boundary,
        stage: row.stage,
        dtype: row.dtype,
        shape: [...row.shape],
        contract: row.contract,
        status: row.status,
        maxAbs: row.diff?.maxAbs ?? null,
        maxUlp: row.diff?.maxUlp ?? null,
      })),
      summary: (({ compared, identical, within, failing, missing, extra }) => ({ compared, identical, within, failing, missing, extra }))(
        summarizeCaptureDiff(rows),
      ),
    };
  } finally {
    await native.close();
    await result.reference.close();
  }
}
