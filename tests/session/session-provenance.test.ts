// session-provenance: the bundles' provenance and the inventory of the reference's evidence,
// derived from the gate's own verdicts. The verdicts come from real runs of the reference
// engine on a committed case (perturb.depth_in_transposed emits depth.in in transposed memory:
// a structural layout mismatch, self-test.ts), from a crashing toy engine, and from a native
// bundle whose tensor bytes were changed after capture (a digest failure).
import { createHash } from 'node:crypto';
import { cpSync, openSync, readFileSync, readSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineHost } from '../../main/engine-host/engine-host.ts';
import { openBundle, type TraceBundle } from '../../main/core/bundle/bundle-reader.ts';
import { SafetensorsFile } from '../../main/core/bundle/safetensors-reader.ts';
import { judgeCase } from '../../main/core/gate/case-verdicts.ts';
import { runGate } from '../../main/core/gate/gate-run.ts';
import type { GateResult } from '../../main/core/gate/gate-types.ts';
import { provenanceOf } from '../../main/session/session-provenance.ts';
import { ProvenanceSchema, type Provenance } from '../../protocol/inspector-api.ts';
import { SEGV_ENGINE, TOY_ENGINE, gateOptions, removeTempDirs, tempDir, writeToyCase } from '../gate/gate-fixtures.ts';
import { REFERENCE_ENGINE, oracleBundle, referenceBundle } from '../helpers/paths.ts';

afterAll(() => removeTempDirs());

interface ManifestJson {
  provenance: unknown;
  files: { path: string; bytes: number; sha256: string }[];
  inputs: { name: string }[];
  passes: { index: number; file: string; boundaries: { name: string; key: string }[] }[];
}
const manifestJson = (dir: string): ManifestJson => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ManifestJson;
const sha256Of = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');
const names = (list: readonly { name: string }[]): string[] => list.map((item) => item.name);
const entry = <T extends { name: string }>(list: readonly T[], name: string): T | undefined => list.find((item) => item.name === name);

describe('a run whose engine emits depth.in transposed (prefill_1tok)', () => {
  let result: GateResult;
  let reference: TraceBundle;
  let oracle: TraceBundle;
  let native: TraceBundle;
  let provenance: Provenance;
  beforeAll(async () => {
    const work = tempDir('provenance-layout');
    result = await runGate(
      gateOptions({
        library: REFERENCE_ENGINE,
        cases: [{ referenceDir: referenceBundle('prefill_1tok'), oracleDir: oracleBundle('prefill_1tok') }],
        workDir: join(work, 'gate'),
        engineOptions: { 'perturb.depth_in_transposed': '1' },
      }),
    );
    const nativeDir = result.cases[0]?.nativeDir ?? '';
    [reference, oracle, native] = await Promise.all([
      openBundle(referenceBundle('prefill_1tok')),
      openBundle(oracleBundle('prefill_1tok')),
      openBundle(nativeDir),
    ]);
    provenance = ProvenanceSchema.parse(
      await provenanceOf({ reference, oracle, native, verdicts: result.cases[0]?.verdicts ?? [], passesRun: reference.passes.map((pass) => pass.index) }),
    );
  });
  afterAll(async () => {
    await Promise.all([reference?.close(), oracle?.close(), native?.close()]);
  });

  it('describes each bundle: role, folder, manifest sha256, provenance verbatim, the files the manifest pins', () => {
    const dirs = { reference: referenceBundle('prefill_1tok'), oracle: oracleBundle('prefill_1tok'), run: result.cases[0]?.nativeDir ?? '' };
    expect(provenance.bundles.map((bundle) => [bundle.role, bundle.kind])).toEqual([
      ['reference', 'reference'],
      ['oracle', 'oracle-f64'],
      ['run', 'native'],
    ]);
    for (const bundle of provenance.bundles) {
      const dir = dirs[bundle.role];
      expect(bundle.dir).toBe(dir);
      expect(bundle.manifestSha256).toBe(sha256Of(join(dir, 'manifest.json')));
      const manifest = manifestJson(dir);
      expect(JSON.parse(bundle.provenanceJson)).toEqual(manifest.provenance);
      expect(bundle.provenanceJson).toContain('\n  "'); // pretty-printed for reading
      expect(bundle.files).toEqual(manifest.files.map((file) => ({ path: file.path, bytes: file.bytes, sha256: file.sha256 })));
    }
  });

  it('rejects the transposed records with the layout mismatch, and only the structurally broken ones', () => {
    const layoutFailures = (result.cases[0]?.verdicts ?? []).filter((verdict) => verdict.reference?.structural?.problem === 'layout');
    expect(layoutFailures.length).toBeGreaterThan(0);
    expect(names(provenance.inventory.rejected)).toEqual(layoutFailures.map((verdict) => `${verdict.pass}:${verdict.boundary}`));
    expect(names(provenance.inventory.rejected)).toContain('0:depth.in');
    expect(entry(provenance.inventory.rejected, '0:depth.in')?.why).toMatch(/^layout mismatch: \S/);
  });

  it('consumes every input and every record that was compared; partitions the reference exactly', () => {
    const manifest = manifestJson(referenceBundle('prefill_1tok'));
    const inputNames = manifest.inputs.map((input) => `input:${input.name}`);
    expect(names(provenance.inventory.consumed).filter((name) => name.startsWith('input:'))).toEqual(inputNames);
    const records = manifest.passes.flatMap((pass) => pass.boundaries.map((boundary) => `${pass.index}:${boundary.name}`));
    const listed = [
      ...names(provenance.inventory.consumed).filter((name) => !name.startsWith('input:')),
      ...names(provenance.inventory.notConsumed),
      ...names(provenance.inventory.rejected),
    ];
    expect(listed.sort()).toEqual([...records].sort());
    const passing = result.cases[0]?.verdicts.find((verdict) => verdict.verdict === 'PASS');
    expect(entry(provenance.inventory.consumed, `${passing?.pass}:${passing?.boundary}`)?.what).toMatch(/compared under its contract: PASS$/);
  });

  it('before later passes run: their records are not consumed because the pass has not run', async () => {
    const verdicts = (result.cases[0]?.verdicts ?? []).filter((verdict) => verdict.pass === 0);
    const partial = await provenanceOf({ reference, oracle, native, verdicts, passesRun: [0] });
    const pass1 = partial.inventory.notConsumed.filter((item) => item.name.startsWith('1:'));
    expect(pass1.length).toBe(reference.passes[1]?.boundaries.length);
    expect(pass1.every((item) => /^pass 1 \((prefill|decode)\) has not run yet$/.test(item.why))).toBe(true);
    expect(partial.inventory.rejected.every((item) => item.name.startsWith('0:'))).toBe(true);
  });

  it('before anything ran: inputs not given yet, no native bundle', async () => {
    const fresh = await provenanceOf({ reference, oracle: null, native: null, verdicts: [], passesRun: [] });
    expect(fresh.bundles.map((bundle) => bundle.role)).toEqual(['reference']);
    expect(fresh.inventory.consumed).toEqual([]);
    expect(entry(fresh.inventory.notConsumed, 'input:prompt_tokens')?.why).toMatch(/not given to the engine yet/);
  });
});

describe('a run whose engine crashes (toy case, segv engine)', () => {
  it('lists what the engine never emitted as not consumed, naming the crash', async () => {
    const root = tempDir('provenance-segv');
    const toy = writeToyCase(root);
    const result = await runGate(
      gateOptions({ library: SEGV_ENGINE, cases: [{ referenceDir: toy.referenceDir, oracleDir: null }], workDir: join(root, 'work') }),
    );
    const [reference, native] = await Promise.all([openBundle(toy.referenceDir), openBundle(result.cases[0]?.nativeDir ?? '')]);
    try {
      const provenance = await provenanceOf({ reference, oracle: null, native, verdicts: result.cases[0]?.verdicts ?? [], passesRun: [0, 1] });
      expect(names(provenance.inventory.consumed)).toEqual(['input:prompt_tokens', '0:toy.embed', '0:toy.mix', '0:toy.token', '1:toy.embed', '1:toy.mix']);
      expect(names(provenance.inventory.notConsumed)).toEqual(['1:toy.token', '2:toy.embed', '2:toy.mix', '2:toy.token']);
      for (const item of provenance.inventory.notConsumed) expect(item.why).toMatch(/^the engine never emitted it: never reached: .*pass 1.*SIGSEGV/);
      expect(provenance.inventory.rejected).toEqual([]);
    } finally {
      await Promise.all([reference.close(), native.close()]);
    }
  });
});

describe('native evidence whose bytes changed after capture', () => {
  it('rejects the record whose digest fails, with the digest named', async () => {
    const root = tempDir('provenance-digest');
    const toy = writeToyCase(root);
    const result = await runGate(
      gateOptions({ library: TOY_ENGINE, cases: [{ referenceDir: toy.referenceDir, oracleDir: null }], workDir: join(root, 'work') }),
    );
    const nativeDir = join(root, 'tampered');
    cpSync(result.cases[0]?.nativeDir ?? '', nativeDir, { recursive: true });
    // Flip one byte inside pass 1's toy.mix tensor: same size, so the bundle still opens unverified.
    const manifest = manifestJson(nativeDir);
    const pass1 = manifest.passes[1];
    const key = pass1?.boundaries.find((boundary) => boundary.name === 'toy.mix')?.key ?? '';
    const file = join(nativeDir, pass1?.file ?? '');
    const tensors = await SafetensorsFile.open(file);
    const begin = tensors.tensor(key)?.begin ?? 0;
    await tensors.close();
    const fd = openSync(file, 'r+');
    const head = Buffer.alloc(8);
    readSync(fd, head, 0, 8, 0);
    const at = 8 + Number(head.readBigUInt64LE(0)) + begin;
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, at);
    byte[0] = (byte[0] as number) ^ 0x01;
    writeSync(fd, byte, 0, 1, at);
    closeSync(fd);

    const host = await EngineHost.start({ library: TOY_ENGINE });
    const description = host.description;
    await host.close();
    const [reference, native] = await Promise.all([openBundle(toy.referenceDir), openBundle(nativeDir, { verify: 'none' })]);
    try {
      const judged = await judgeCase({
        caseId: 'toy',
        reference,
        native,
        oracle: null,
        description,
        ledger: [],
        stop: null,
        nativeUnreadable: null,
        contracts: {},
      });
      const provenance = await provenanceOf({ reference, oracle: null, native, verdicts: judged.verdicts, passesRun: [0, 1, 2] });
      expect(names(provenance.inventory.rejected)).toEqual(['1:toy.mix']);
      expect(provenance.inventory.rejected[0]?.why).toMatch(/^evidence unreadable: .*sha256/);
      expect(names(provenance.inventory.consumed)).toContain('1:toy.embed');
    } finally {
      await Promise.all([reference.close(), native.close()]);
      rmSync(nativeDir, { recursive: true, force: true });
    }
  });
});
