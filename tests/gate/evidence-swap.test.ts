// A pass file of the reference swapped while the gate runs (after the gate validated it, before
// it judged it): the gate must notice, name the file, write NO receipt and NO report, and exit
// 2 — never sign digests of evidence it did not judge, never sign and then crash.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { evidenceChangedDuringRun } from '../../main/core/gate/evidence-recheck.ts';
import { startCapture } from '../cli/interrupt-harness.ts';
import { TESTLIB_DIR } from '../helpers/paths.ts';
import { keyFiles, removeTempDirs, tempDir, writeToyCase } from './gate-fixtures.ts';

afterAll(() => removeTempDirs());

/** Flips the last byte of a file (a tensor's data: the header is at the front). */
function tamper(file: string): void {
  const bytes = readFileSync(file);
  bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0xff;
  writeFileSync(file, bytes);
}

/** Runs the gate with the hang engine and calls `change` while pass 1 hangs (3 s watchdog). */
async function gateChangedMidRun(
  change: (layout: { referenceDir: string; weights: string }) => void,
): Promise<{ code: number | null; stderr: string; work: string; json: string }> {
  const root = tempDir('swap');
  const { referenceDir } = writeToyCase(join(root, 'case'), { passes: 3 });
  const { privateKeyPath } = keyFiles(root);
  const work = join(root, 'work');
  const json = join(root, 'gate.json');
  const gate = startCapture([
    '--gate',
    '--engine',
    join(TESTLIB_DIR, 'libhang_engine.so'),
    '--bundle',
    referenceDir,
    '--work',
    work,
    '--key',
    privateKeyPath,
    '--json',
    json,
    '--timeout',
    '3',
  ]);
  const journal = join(work, 'toy', 'native', 'capture.journal.jsonl');
  const deadline = Date.now() + 30_000;
  while (!(existsSync(journal) && readFileSync(journal, 'utf8').includes('"t":"pass_begin","pass":1')) && Date.now() < deadline) await sleep(20);
  change({ referenceDir, weights: join(root, 'case', 'weights.bin') });
  const ended = await gate.ended;
  return { code: ended.code, stderr: ended.stderr, work, json };
}

describe('the weights changed while the gate runs', () => {
  it('is caught by the re-check before signing: exit 2 naming the weights, no receipt, no report', async () => {
    let weights = '';
    const ended = await gateChangedMidRun((layout) => {
      weights = layout.weights;
      tamper(layout.weights);
    });
    expect(ended.stderr).not.toMatch(/internal error|^\s+at /m);
    expect(ended.code).toBe(2);
    expect(ended.stderr).toContain(`the weights ${weights} changed while the gate ran`);
    expect(existsSync(join(ended.work, 'receipt.dsse.json'))).toBe(false);
    expect(existsSync(ended.json)).toBe(false);
  });
});

describe('a reference pass file swapped while the gate runs', () => {
  it('is caught before signing: exit 2 naming the file, no receipt, no report', async () => {
    const root = tempDir('swap');
    const { referenceDir } = writeToyCase(join(root, 'case'), { passes: 3 });
    const { privateKeyPath } = keyFiles(root);
    const work = join(root, 'work');
    const json = join(root, 'gate.json');
    // The hang engine hangs in decode pass 1 until the watchdog (3 s): the window for the swap.
    const gate = startCapture([
      '--gate',
      '--engine',
      join(TESTLIB_DIR, 'libhang_engine.so'),
      '--bundle',
      referenceDir,
      '--work',
      work,
      '--key',
      privateKeyPath,
      '--json',
      json,
      '--timeout',
      '3',
    ]);
    const journal = join(work, 'toy', 'native', 'capture.journal.jsonl');
    const deadline = Date.now() + 30_000;
    while (!(existsSync(journal) && readFileSync(journal, 'utf8').includes('"t":"pass_begin","pass":1')) && Date.now() < deadline) await sleep(20);
    tamper(join(referenceDir, 'pass-000.safetensors'));
    const ended = await gate.ended;
    expect(ended.stderr).not.toMatch(/internal error|^\s+at /m);
    expect(ended.code).toBe(2);
    expect(ended.stderr).toContain(join(referenceDir, 'pass-000.safetensors'));
    expect(ended.stderr).toMatch(/changed while the gate ran/);
    expect(ended.stderr).toContain('no receipt or report was written');
    expect(existsSync(join(work, 'receipt.dsse.json'))).toBe(false);
    expect(existsSync(json)).toBe(false);
  });
});

describe('evidenceChangedDuringRun', () => {
  it('names each kind of change and is null when nothing changed', async () => {
    const root = tempDir('recheck');
    const { referenceDir } = writeToyCase(join(root, 'case'));
    const weights = join(root, 'case', 'weights.bin'); // written by writeToyCase
    const library = join(root, 'engine.so');
    writeFileSync(library, 'engine bytes');
    const sha = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');
    const result = {
      engine: { library, sha256: sha(library) },
      cases: [
        {
          id: 'toy',
          reference: { dir: referenceDir, manifestPath: join(referenceDir, 'manifest.json'), manifestSha256: sha(join(referenceDir, 'manifest.json')) },
          oracle: null,
          nativeDir: null,
          isolatedDir: null,
          weights: { path: weights, sha256: sha(weights) },
        },
      ],
    } as unknown as Parameters<typeof evidenceChangedDuringRun>[0];
    expect(await evidenceChangedDuringRun(result)).toBeNull();
    writeFileSync(weights, 'other weights');
    expect(await evidenceChangedDuringRun(result)).toMatch(/the weights .* changed while the gate ran/);
    writeFileSync(library, 'other engine');
    expect(await evidenceChangedDuringRun(result)).toMatch(/the engine library .* changed/);
    writeFileSync(library, 'engine bytes');
    tamper(join(referenceDir, 'pass-001.safetensors'));
    expect(await evidenceChangedDuringRun(result)).toMatch(/reference bundle changed while the gate ran: .*pass-001\.safetensors/);
  });
});
