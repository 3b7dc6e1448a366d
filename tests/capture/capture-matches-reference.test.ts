// The reference engine, captured through the isolated engine host, reproduces every committed
// reference case: every bit-exact boundary identical, every faithful boundary inside the bound
// its contract derives (docs/reference-model.md), nothing missing, nothing extra.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { diffCapture, summarizeCaptureDiff, type BoundaryDiffRow } from '../../main/core/capture/capture-diff.ts';
import { captureRun } from '../../main/core/capture/capture-run.ts';
import { CASES, REFERENCE_ENGINE, freshTempDir, referenceBundle } from '../helpers/paths.ts';

const outRoot = freshTempDir('capture');
const describeRow = (row: BoundaryDiffRow): string =>
  `pass ${row.pass} ${row.boundary}: ${row.status}${row.detail ? ` (${row.detail})` : ''}` +
  (row.diff ? ` mismatches=${row.diff.mismatches}/${row.diff.elements} maxAbs=${row.diff.maxAbs} maxUlp=${row.diff.maxUlp}` : '');

describe.each(CASES)('case %s', (caseId) => {
  let rows: BoundaryDiffRow[] = [];

  it('captures every pass of the reference and matches it within contract', async () => {
    const outDir = join(outRoot, caseId);
    const result = await captureRun({
      library: REFERENCE_ENGINE,
      referenceDir: referenceBundle(caseId),
      outDir,
      command: `test capture ${caseId}`,
    });
    expect(result.run.status).toBe('completed');
    expect(result.passes).toHaveLength(result.reference.passes.length);
    const native = await openBundle(outDir);
    try {
      expect(native.manifest.kind).toBe('native');
      expect(native.manifest.passes.map((pass) => [pass.kind, pass.mode])).toEqual(result.reference.passes.map((pass) => [pass.kind, pass.mode]));
      rows = await diffCapture(native, result.reference);
    } finally {
      await native.close();
      await result.reference.close();
    }
    const failing = rows.filter((row) => !['identical', 'within'].includes(row.status));
    expect(failing.map(describeRow)).toEqual([]);
    const summary = summarizeCaptureDiff(rows);
    expect(summary.compared).toBeGreaterThan(100);
    expect(summary.missing + summary.extra).toBe(0);
  });

  it('matches every integer and bit-exact boundary bit for bit', () => {
    const exact = rows.filter((row) => row.contract === 'bit_exact');
    expect(exact.length).toBeGreaterThan(0);
    expect(exact.filter((row) => row.status !== 'identical').map(describeRow)).toEqual([]);
  });
});

afterAll(async () => {
  const { rm } = await import('node:fs/promises');
  await rm(outRoot, { recursive: true, force: true });
});
