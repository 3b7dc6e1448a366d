// `--json` (and `--junit`) on a full disk: the gate says it could not write the report and exits
// 1, and leaves NO file under the report's name — a 0-byte report used to stay behind and block
// the next run (which refuses to overwrite an output). The disk is a real one: a small tmpfs
// (mounting needs root; skipped where it is refused).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeNewFileAtomically } from '../../main/core/report/new-file.ts';
import { runCliProcess } from '../helpers/run-cli.ts';
import { TESTLIB_DIR } from '../helpers/paths.ts';
import { keyFiles, tempDir, removeTempDirs, writeToyCase } from './gate-fixtures.ts';

const root = tempDir('full-disk');
const disk = join(root, 'disk');
mkdirSync(disk);
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', disk]).status === 0;
afterAll(() => {
  if (mounted) spawnSync('umount', [disk]);
  removeTempDirs();
});

describe.skipIf(!mounted)('reports on a full disk', () => {
  it('writeNewFileAtomically leaves neither the file nor its temporary when the disk fills up', async () => {
    const target = join(disk, 'report.json');
    const error = await writeNewFileAtomically(target, 'x'.repeat(1024 * 1024)).then(
      () => null,
      (thrown: unknown) => thrown as NodeJS.ErrnoException,
    );
    expect(error?.code).toBe('ENOSPC');
    expect(readdirSync(disk)).toEqual([]);
    await writeNewFileAtomically(target, '{"small":true}\n');
    expect(statSync(target).size).toBe(15);
    await expect(writeNewFileAtomically(target, '{}')).rejects.toThrow(/already exists/);
  });

  it('gate --json on a full disk: exit 1, no 0-byte report, and the next run can write it', () => {
    const { referenceDir } = writeToyCase(join(root, 'case'));
    const { privateKeyPath } = keyFiles(root);
    // Fill what is left of the disk so the report cannot fit.
    spawnSync('sh', ['-c', `head -c 60000 /dev/urandom > ${join(disk, 'filler')}`]);
    const json = join(disk, 'gate.json');
    const args = (work: string): string[] => [
      '--gate',
      '--engine',
      join(TESTLIB_DIR, 'libtoy_engine.so'),
      '--bundle',
      referenceDir,
      '--work',
      join(root, work),
      '--key',
      privateKeyPath,
      '--json',
      json,
    ];
    const full = runCliProcess(args('work-1'));
    expect(full.status).toBe(1);
    expect(full.stderr).toMatch(/gate: cannot write the json .*ENOSPC/);
    expect(full.stderr).not.toMatch(/internal error|^\s+at /m);
    expect(existsSync(json)).toBe(false);
    expect(readdirSync(disk).filter((name) => name.includes('gate.json'))).toEqual([]); // nor its temporary

    spawnSync('rm', [join(disk, 'filler')]);
    const next = runCliProcess(args('work-2'));
    expect(next.stderr).not.toContain('already exists');
    expect(next.status).toBe(0);
    expect(statSync(json).size).toBeGreaterThan(0);
  });
});
