// Evidence read once (main/core/bundle/file-pins.ts): a file verified when its bundle is opened
// is not hashed again while its identity (device, inode, size, mtime, ctime) holds — neither as
// the comparison reads its tensors nor by the closing check before a receipt is signed. These
// tests change a file after the open and check the change is still caught, at the file and the
// tensor changed: before the comparison reads it (compare and gate), while a tensor is read,
// and after the comparison (the closing checks of compare and gate).
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { PIN_MARGIN_MS, pinOf, pinTrusted, REHASH_ENV } from '../../main/core/bundle/file-pins.ts';
import { hashFilesInParallel } from '../../main/core/bundle/parallel-verify.ts';
import { compareBoundary } from '../../main/core/compare/compare-boundary.ts';
import { compareEvidenceChanged } from '../../main/core/compare/compare-recheck.ts';
import { runCompare } from '../../main/core/compare/compare-run.ts';
import { plainCompareOptions } from '../helpers/compare-options.ts';
import { evidenceChangedDuringRun } from '../../main/core/gate/evidence-recheck.ts';
import { runGate } from '../../main/core/gate/gate-run.ts';
import { startCapture } from '../cli/interrupt-harness.ts';
import { TESTLIB_DIR } from '../helpers/paths.ts';
import { flipTensorByte } from '../helpers/tensor-tamper.ts';
import { gateOptions, keyFiles, removeTempDirs, tempDir, TOY_ENGINE, writeToyCase } from './gate-fixtures.ts';
import { rejectionOf } from '../helpers/rejection.ts';

afterAll(removeTempDirs);

/** Waits until files written now are old enough for their pins to be trusted. */
const settle = (): Promise<void> => sleep(PIN_MARGIN_MS + 50);

async function drain(chunks: AsyncGenerator<Uint8Array, void, undefined>): Promise<number> {
  let bytes = 0;
  for await (const chunk of chunks) bytes += chunk.byteLength;
  return bytes;
}

const caught = (promise: Promise<unknown>): Promise<BundleError> => rejectionOf(promise, BundleError);

describe('when a pin is trusted', () => {
  const evidence = { identity: 'x', ctimeNs: '1700000000123456789', statAtMs: 1_700_000_000_123 + 1000, fsType: 0xef53 };
  it('only on a local Linux filesystem, for a file older than the margin, unless TRACE_INSPECTOR_REHASH=always', () => {
    expect(pinTrusted(evidence, 'linux', {})).toBe(true);
    expect(pinTrusted({ ...evidence, statAtMs: 1_700_000_000_123 + PIN_MARGIN_MS - 1 }, 'linux', {})).toBe(false);
    expect(pinTrusted({ ...evidence, fsType: 0x6969 /* NFS */ }, 'linux', {})).toBe(false);
    expect(pinTrusted(evidence, 'darwin', {})).toBe(false);
    expect(pinTrusted(evidence, 'linux', { [REHASH_ENV]: 'always' })).toBe(false);
    // A whole-second ctime (a coarse filesystem): the margin is two seconds.
    expect(pinTrusted({ ...evidence, ctimeNs: '1700000000000000000', statAtMs: 1_700_000_001_500 }, 'linux', {})).toBe(false);
    expect(pinTrusted({ ...evidence, ctimeNs: '1700000000000000000', statAtMs: 1_700_000_002_500 }, 'linux', {})).toBe(true);
  });
});

describe('pins of files written just before the open', () => {
  it('a large file whose ctime is within the settle time is hashed only once it is that old, so its pin can be trusted', async () => {
    const file = join(tempDir('pins-fresh'), 'fresh.bin');
    writeFileSync(file, new Uint8Array(64 * 1024));
    const [outcome] = await hashFilesInParallel([{ path: file, spans: [], settleMs: 1500, settleMinBytes: 1024 }]);
    if (outcome === null || outcome === undefined || !outcome.ok) throw new Error('test: the file was not hashed');
    expect(outcome.pin.statAtMs).toBeGreaterThanOrEqual(Number(BigInt(outcome.pin.ctimeNs) / 1_000_000n) + 1500);
    // Below the size threshold: no wait.
    const [small] = await hashFilesInParallel([{ path: file, spans: [], settleMs: 60_000, settleMinBytes: 1024 * 1024 }]);
    expect(small?.ok).toBe(true);
  });
});

describe('a file changed after its bundle was opened', () => {
  it('is caught when a tensor is read, at the tensor changed; the tensors it did not touch still read', async () => {
    const toy = writeToyCase(tempDir('pins-read'));
    await settle();
    const bundle = await openBundle(toy.referenceDir);
    try {
      const passFile = join(toy.referenceDir, 'pass-001.safetensors');
      expect(pinOf(realpathSync(passFile))?.sha256).toBe(bundle.manifest.files.find((entry) => entry.path === 'pass-001.safetensors')?.sha256);
      for (const entry of bundle.passes[1]?.boundaries ?? []) expect(await drain(bundle.readBoundaryChunks(1, entry.name))).toBe(entry.byte_length);
      await flipTensorByte(bundle, 1, 'toy.mix');
      expect(await drain(bundle.readBoundaryChunks(1, 'toy.embed'))).toBe(bundle.boundary(1, 'toy.embed')?.byte_length);
      const error = await caught(drain(bundle.readBoundaryChunks(1, 'toy.mix')));
      expect(error.code).toBe('E_DIGEST');
      expect(error.file).toBe(passFile);
      expect(error.field).toBe('passes[1].boundaries[1].sha256');
      expect((await caught(bundle.readBoundary(1, 'toy.mix'))).field).toBe('passes[1].boundaries[1].sha256');
    } finally {
      await bundle.close();
    }
  });

  it('is caught when it is written while a tensor is read, even where the tensor itself is intact', async () => {
    const toy = writeToyCase(tempDir('pins-during'));
    await settle();
    const bundle = await openBundle(toy.referenceDir);
    try {
      const chunks = bundle.readBoundaryChunks(0, 'toy.embed', 16);
      expect((await chunks.next()).done).toBe(false);
      await flipTensorByte(bundle, 0, 'toy.token');
      const error = await caught(drain(chunks));
      expect(error.field).toBe('passes[0].boundaries[0].sha256');
      expect(error.message).toContain('written to while the tensor was read');
    } finally {
      await bundle.close();
    }
  });

  it('compare: a reference changed between the open and the comparison fails that boundary with E_DIGEST naming it', async () => {
    const reference = writeToyCase(tempDir('pins-compare-ref'));
    const candidate = writeToyCase(tempDir('pins-compare-cand'));
    await settle();
    const [ref, cand] = await Promise.all([openBundle(reference.referenceDir), openBundle(candidate.referenceDir)]);
    try {
      expect((await compareBoundary({ native: cand, reference: ref }, 2, 'toy.token')).outcome).toBe('pass');
      const file = await flipTensorByte(ref, 2, 'toy.token');
      const error = await caught(compareBoundary({ native: cand, reference: ref }, 2, 'toy.token'));
      expect(error.file).toBe(file);
      expect(error.field).toBe('passes[2].boundaries[2].sha256');
    } finally {
      await Promise.all([ref.close(), cand.close()]);
    }
  });

  it('compare: a file changed after the comparison is named by the closing check, file and tensor', async () => {
    const root = tempDir('pins-compare-after');
    const reference = writeToyCase(join(root, 'r'));
    const candidate = writeToyCase(join(root, 'c'));
    await settle();
    const result = await runCompare(plainCompareOptions(reference.referenceDir, candidate.referenceDir));
    expect(result.seals.lines[1]).toBe('OVERALL: PASSED');
    expect(await compareEvidenceChanged(result)).toBeNull();
    const bundle = await openBundle(candidate.referenceDir, { verify: 'none' });
    const file = await flipTensorByte(bundle, 2, 'toy.mix');
    await bundle.close();
    const changed = await compareEvidenceChanged(result);
    expect(changed).toContain(`the candidate bundle changed while it was compared: ${file}`);
    expect(changed).toContain('(passes[2].boundaries[1].sha256)');
  });
});

describe('the gate with evidence changed after the open', () => {
  /** A toy case written, settled and gated (the toy engine: the gate is INCOMPLETE, its evidence judged). */
  async function gatedToyCase(name: string): Promise<{ toy: ReturnType<typeof writeToyCase>; result: Awaited<ReturnType<typeof runGate>> }> {
    const root = tempDir(name);
    const toy = writeToyCase(root);
    await settle();
    const result = await runGate(
      gateOptions({ library: TOY_ENGINE, cases: [{ referenceDir: toy.referenceDir, oracleDir: null }], workDir: join(root, 'work') }),
    );
    return { toy, result };
  }

  it('after the comparison: the closing check names the reference and the native file and tensor changed', async () => {
    const { toy, result } = await gatedToyCase('pins-gate-after');
    expect(result.seals.lines[0]).toBe('FIDELITY: INCOMPLETE');
    expect(await evidenceChangedDuringRun(result)).toBeNull();
    const reference = await openBundle(toy.referenceDir, { verify: 'none' });
    const referenceFile = await flipTensorByte(reference, 1, 'toy.embed');
    await reference.close();
    const changed = await evidenceChangedDuringRun(result);
    expect(changed).toContain(`case toy: the reference bundle changed while the gate ran: ${referenceFile}`);
    expect(changed).toContain('(passes[1].boundaries[0].sha256)');
    await flipTensorByte(await openBundle(toy.referenceDir, { verify: 'none' }), 1, 'toy.embed'); // restored

    const nativeDir = result.cases[0]?.nativeDir as string;
    expect(await evidenceChangedDuringRun(result)).toBeNull();
    const native = await openBundle(nativeDir, { verify: 'none' });
    const nativeFile = await flipTensorByte(native, 2, 'toy.token');
    await native.close();
    const nativeChanged = await evidenceChangedDuringRun(result);
    expect(nativeChanged).toContain(`case toy: the native bundle changed while the gate ran: ${nativeFile}`);
    expect(nativeChanged).toContain('(passes[2].boundaries[2].sha256)');
  });

  it('after the comparison: a manifest rewritten, its files untouched, is named by the closing check', async () => {
    // The closing check takes a manifest's list of files from the parse of the bytes judged, when
    // the bytes on disk still hash the same: the bytes are hashed again, every time.
    const { toy, result } = await gatedToyCase('pins-gate-manifest');
    expect(await evidenceChangedDuringRun(result)).toBeNull();
    for (const dir of [toy.referenceDir, result.cases[0]?.nativeDir as string]) {
      const manifestPath = join(dir, 'manifest.json');
      const judged = readFileSync(manifestPath, 'utf8');
      writeFileSync(manifestPath, JSON.stringify(JSON.parse(judged), null, 1)); // the same contents, other bytes
      const changed = await evidenceChangedDuringRun(result);
      expect(changed).toContain(`${manifestPath}: lists other contents than when it was judged`);
      writeFileSync(manifestPath, judged);
      expect(await evidenceChangedDuringRun(result)).toBeNull();
    }
  });

  it('mid-run, with the reference settled and pinned: exit 2 naming the file and the tensor, nothing signed', async () => {
    const root = tempDir('pins-gate-mid');
    const { referenceDir } = writeToyCase(join(root, 'case'), { passes: 3 });
    const { privateKeyPath } = keyFiles(root);
    await settle();
    const work = join(root, 'work');
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
      '--timeout',
      '3',
    ]);
    const journal = join(work, 'toy', 'native', 'capture.journal.jsonl');
    const deadline = Date.now() + 30_000;
    while (!(existsSync(journal) && readFileSync(journal, 'utf8').includes('"t":"pass_begin","pass":1')) && Date.now() < deadline) await sleep(20);
    const bundle = await openBundle(referenceDir, { verify: 'none' });
    const file = await flipTensorByte(bundle, 0, 'toy.mix');
    await bundle.close();
    const ended = await gate.ended;
    expect(ended.stderr).not.toMatch(/internal error|^\s+at /m);
    expect(ended.code).toBe(2);
    expect(ended.stderr).toContain(`the reference bundle changed while the gate ran: ${file}`);
    expect(ended.stderr).toContain('(passes[0].boundaries[1].sha256)');
    expect(existsSync(join(work, 'receipt.dsse.json'))).toBe(false);
  });
});
