// The known-gap ledger: where entries come from (manifest, known-gaps.json beside the bundle,
// --ledger), how they match, and the usage errors that name the file and the entry.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBundle } from '../../main/core/bundle/bundle-reader.ts';
import { findLedgerEntry, LedgerError, loadLedger, type LedgerCase } from '../../main/core/gate/ledger.ts';
import { removeTempDirs, tempDir, writeToyCase } from './gate-fixtures.ts';

afterAll(removeTempDirs);

async function ledgerCase(referenceDir: string): Promise<LedgerCase> {
  const bundle = await openBundle(referenceDir);
  await bundle.close();
  return { caseId: bundle.manifest.case.id, referenceDir, manifestPath: bundle.manifestPath, manifest: bundle.manifest };
}

const entry = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: 'KG-MIX',
  boundary: 'toy.mix',
  reason: 'the toy mixes in the wrong order',
  reopen_evidence: 'a native run inside the contract',
  ...over,
});

function ledgerFile(path: string, entries: unknown[], extra: Record<string, unknown> = {}): string {
  writeFileSync(path, JSON.stringify({ schema: 'trace-inspector.known-gaps', schema_version: 1, known_gaps: entries, ...extra }));
  return path;
}

describe('loadLedger', () => {
  it('reads known_gaps from the reference manifest, scoped to that case', async () => {
    const root = tempDir('ledger-manifest');
    const toy = writeToyCase(root, {
      knownGaps: [{ id: 'KG-EMBED', boundary: 'toy.embed', passes: [1], reason: 'r', reopen_evidence: 'e' }],
    });
    const ledger = await loadLedger([await ledgerCase(toy.referenceDir)], null);
    expect(ledger.entries).toHaveLength(1);
    expect(findLedgerEntry(ledger.entries, 'toy', 1, 'toy.embed')?.id).toBe('KG-EMBED');
    expect(findLedgerEntry(ledger.entries, 'toy', 0, 'toy.embed')).toBeNull();
    expect(findLedgerEntry(ledger.entries, 'other', 1, 'toy.embed')).toBeNull();
  });

  it('finds known-gaps.json beside the bundle; no passes means every pass', async () => {
    const root = tempDir('ledger-beside');
    const toy = writeToyCase(root);
    const file = ledgerFile(join(toy.caseDir, 'known-gaps.json'), [entry()]);
    const ledger = await loadLedger([await ledgerCase(toy.referenceDir)], null);
    expect(ledger.files).toEqual([file]);
    for (const pass of [0, 1, 2]) expect(findLedgerEntry(ledger.entries, 'toy', pass, 'toy.mix')?.id).toBe('KG-MIX');
  });

  it('--ledger replaces the file beside the bundle', async () => {
    const root = tempDir('ledger-explicit');
    const toy = writeToyCase(root);
    ledgerFile(join(toy.caseDir, 'known-gaps.json'), [entry({ id: 'KG-BESIDE' })]);
    const explicit = ledgerFile(join(root, 'policy.json'), [entry({ id: 'KG-POLICY', boundary: 'toy.token', passes: [2] })]);
    const ledger = await loadLedger([await ledgerCase(toy.referenceDir)], explicit);
    expect(ledger.entries.map((item) => item.id)).toEqual(['KG-POLICY']);
    expect(findLedgerEntry(ledger.entries, 'toy', 2, 'toy.token')?.source).toBe(explicit);
  });

  it('an entry naming a boundary no reference has is a usage error naming the file and the entry', async () => {
    const root = tempDir('ledger-unknown');
    const toy = writeToyCase(root);
    const file = ledgerFile(join(root, 'policy.json'), [entry(), entry({ id: 'KG-TYPO', boundary: 'toy.mixx' })]);
    const error = await loadLedger([await ledgerCase(toy.referenceDir)], file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LedgerError);
    expect((error as LedgerError).message).toContain(file);
    expect((error as LedgerError).message).toContain('known_gaps[1]');
    expect((error as LedgerError).message).toContain('KG-TYPO');
    expect((error as LedgerError).message).toContain('toy.mixx');
  });

  it('an entry naming a boundary only in passes the reference does not have is refused', async () => {
    const root = tempDir('ledger-passes');
    const toy = writeToyCase(root);
    const file = ledgerFile(join(root, 'policy.json'), [entry({ passes: [7] })]);
    await expect(loadLedger([await ledgerCase(toy.referenceDir)], file)).rejects.toThrow(/known_gaps\[0\]\.passes.*passes \[7\]/);
  });

  it('a manifest known gap naming a boundary the reference lacks is refused too', async () => {
    const root = tempDir('ledger-manifest-typo');
    const toy = writeToyCase(root, { knownGaps: [{ id: 'KG-X', boundary: 'toy.nothing', passes: [], reason: 'r', reopen_evidence: 'e' }] });
    await expect(loadLedger([await ledgerCase(toy.referenceDir)], null)).rejects.toThrow(/manifest\.json: known_gaps\[0\]\.boundary/);
  });

  it('schema problems, bad JSON, a missing --ledger and duplicate ids are usage errors', async () => {
    const root = tempDir('ledger-schema');
    const toy = writeToyCase(root);
    const item = await ledgerCase(toy.referenceDir);
    const noReason = ledgerFile(join(root, 'a.json'), [{ id: 'X', boundary: 'toy.mix', reopen_evidence: 'e' }]);
    await expect(loadLedger([item], noReason)).rejects.toThrow(/known_gaps\[0\]\.reason/);
    const unknownField = ledgerFile(join(root, 'b.json'), [entry({ severity: 'high' })]);
    await expect(loadLedger([item], unknownField)).rejects.toThrow(/severity/);
    const wrongSchema = join(root, 'c.json');
    writeFileSync(wrongSchema, JSON.stringify({ schema: 'something-else', schema_version: 1, known_gaps: [] }));
    await expect(loadLedger([item], wrongSchema)).rejects.toThrow(/schema/);
    const notJson = join(root, 'd.json');
    writeFileSync(notJson, '{ "known_gaps": [ ');
    await expect(loadLedger([item], notJson)).rejects.toThrow(/not valid JSON/);
    await expect(loadLedger([item], join(root, 'missing.json'))).rejects.toThrow(/does not exist/);
    const duplicate = ledgerFile(join(root, 'e.json'), [entry(), entry({ boundary: 'toy.embed' })]);
    await expect(loadLedger([item], duplicate)).rejects.toThrow(/already declared/);
  });

  it('an entry for a case this run does not include is ignored with a warning', async () => {
    const root = tempDir('ledger-other-case');
    const toy = writeToyCase(root);
    const file = ledgerFile(join(root, 'policy.json'), [entry({ case: 'not-in-this-run', boundary: 'whatever' })]);
    const ledger = await loadLedger([await ledgerCase(toy.referenceDir)], file);
    expect(ledger.entries).toEqual([]);
    expect(ledger.warnings.join('\n')).toContain('not-in-this-run');
  });
});
