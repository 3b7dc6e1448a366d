// Issue 10, class 2, from the inside: every CLI option that names a file and every manifest
// field that names a file, fed a character device, a FIFO, a folder, a symlink (to a device for
// a path the user names; out of the bundle for a path a bundle names) and a file over its size
// cap. Each must be refused within a bound with exit 2 and an error that names the file (and
// the field), no internal error, no stack trace; a refused weights path never prints the
// digest of the file it points at. The serve-mode entry points are in serve-hostile.test.ts.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeReceipt } from '../../main/core/receipt/receipt.ts';
import { generateKeyPair } from '../../main/core/receipt/keys.ts';
import { referenceBundle } from '../helpers/paths.ts';
import {
  SMALL_CASE,
  copyBundle,
  describeRefusal,
  hasStackTrace,
  hostileTargets,
  removeTempDirs,
  runCliBounded,
  tempDir,
  userNamedVariant,
  variantInsideBundle,
  VARIANTS,
  type HostileTargets,
  type Variant,
} from './hostile-fixtures.ts';

interface Scenario {
  args: string[];
  /** Text the error must contain: the path as given, or the manifest field. */
  names: string[];
}

interface EntryPoint {
  name: string;
  /** The scenario for one variant, or null when the variant means nothing here. */
  prepare(variant: Variant, scratch: string): Scenario | null;
}

let targets: HostileTargets;
let receipt: string;
let keyDir: string;
let configDir: string;

beforeAll(async () => {
  const root = tempDir('targets');
  targets = hostileTargets(join(root, 'targets'));
  keyDir = join(root, 'keys');
  const pair = generateKeyPair(keyDir);
  receipt = join(root, 'receipt.json');
  await writeReceipt(receipt, { subjects: [{ name: 'x.bin', digest: { sha256: 'a'.repeat(64) } }], predicate: {}, privateKey: pair.privateKey });
  configDir = join(root, 'config');
});
afterAll(removeTempDirs);

const gateArgs = (scratch: string): string[] => ['--gate', '--bundle', referenceBundle(SMALL_CASE), '--work', join(scratch, 'work')];

const ENTRY_POINTS: EntryPoint[] = [
  {
    name: 'verify <receipt>',
    prepare: (variant, scratch) => {
      const path = userNamedVariant(targets, variant, scratch, 64 * 1024 * 1024);
      return path === null ? null : { args: ['verify', path], names: [path] };
    },
  },
  {
    name: 'verify --pubkey',
    prepare: (variant, scratch) => {
      const path = userNamedVariant(targets, variant, scratch, 64 * 1024);
      return path === null ? null : { args: ['verify', receipt, '--pubkey', path], names: [path] };
    },
  },
  {
    name: '--gate --key',
    prepare: (variant, scratch) => {
      const path = userNamedVariant(targets, variant, scratch, 64 * 1024);
      return path === null ? null : { args: [...gateArgs(scratch), '--key', path], names: [path] };
    },
  },
  {
    name: '--gate --ledger',
    prepare: (variant, scratch) => {
      const path = userNamedVariant(targets, variant, scratch, 4 * 1024 * 1024);
      return path === null ? null : { args: [...gateArgs(scratch), '--key', join(keyDir, 'trace-inspector-ed25519.key'), '--ledger', path], names: [path] };
    },
  },
  {
    name: 'capture --weights',
    prepare: (variant, scratch) => {
      const path = userNamedVariant(targets, variant, scratch, null);
      return path === null
        ? null
        : { args: ['capture', '--bundle', referenceBundle(SMALL_CASE), '--weights', path, '--out', join(scratch, 'out')], names: [path] };
    },
  },
  {
    name: 'capture --engine',
    prepare: (variant, scratch) => {
      const path = userNamedVariant(targets, variant, scratch, null);
      return path === null
        ? null
        : { args: ['capture', '--bundle', referenceBundle(SMALL_CASE), '--engine', path, '--out', join(scratch, 'out')], names: [path] };
    },
  },
  {
    name: 'manifest.json of --bundle',
    prepare: (variant, scratch) => {
      const bundle = copyBundle(join(scratch, 'bundle'));
      if (!variantInsideBundle(targets, variant, bundle, 'manifest.json', 256 * 1024 * 1024)) return null;
      return { args: ['capture', '--bundle', bundle, '--out', join(scratch, 'out')], names: [join(bundle, 'manifest.json')] };
    },
  },
  {
    name: 'a tensor file the manifest lists (files[].path)',
    prepare: (variant, scratch) => {
      const bundle = copyBundle(join(scratch, 'bundle'));
      // Oversized: larger than files[].bytes declares; refused before a byte of it is read.
      if (!variantInsideBundle(targets, variant, bundle, 'pass-000.safetensors', 1024 * 1024)) return null;
      return { args: ['capture', '--bundle', bundle, '--out', join(scratch, 'out')], names: ['pass-000.safetensors', 'files[1]'] };
    },
  },
  {
    name: 'provenance.model.weights_file',
    prepare: (variant, scratch) => {
      const bundle = copyBundle(join(scratch, 'bundle'), (manifest) => {
        manifest.provenance.model.weights_file = 'weights.safetensors';
      });
      if (!variantInsideBundle(targets, variant, bundle, 'weights.safetensors', null)) return null;
      return { args: ['capture', '--bundle', bundle, '--out', join(scratch, 'out')], names: ['provenance.model.weights_file', 'weights.safetensors'] };
    },
  },
  {
    name: 'the capture journal of a folder given to recover',
    prepare: (variant, scratch) => {
      const dir = join(scratch, 'interrupted');
      mkdirSync(dir);
      if (!variantInsideBundle(targets, variant, dir, 'capture.journal.jsonl', 256 * 1024 * 1024)) return null;
      return { args: ['recover', dir], names: [join(dir, 'capture.journal.jsonl')] };
    },
  },
];

describe('every file-naming entry point refuses special, escaping and oversized files', () => {
  for (const entry of ENTRY_POINTS) {
    it(
      entry.name,
      async () => {
        let tried = 0;
        for (const variant of VARIANTS) {
          const scratch = tempDir(variant);
          const scenario = entry.prepare(variant, scratch);
          if (scenario === null) continue;
          tried += 1;
          const run = await runCliBounded(scenario.args, { env: { TRACE_INSPECTOR_CONFIG_DIR: configDir } });
          const said = `${entry.name}, ${variant}: ${describeRefusal(run)}`;
          expect(run.timedOut, said).toBe(false);
          expect(run.status, said).toBe(2);
          expect(hasStackTrace(run.stderr), said).toBe(false);
          for (const name of scenario.names) expect(run.stderr, said).toContain(name);
          expect(run.stderr + run.stdout, said).not.toContain(targets.outsideSha256);
        }
        expect(tried).toBeGreaterThanOrEqual(4);
      },
      VARIANTS.length * 35_000,
    );
  }
});

describe('a bundle may not name weights anywhere on the machine', () => {
  it('a weights_file outside the bundle and every weights root is refused before it is hashed', async () => {
    const scratch = tempDir('weights-outside');
    const bundle = copyBundle(join(scratch, 'bundle'), (manifest) => {
      manifest.provenance.model.weights_file = targets.outsideFile;
    });
    const run = await runCliBounded(['capture', '--bundle', bundle, '--out', join(scratch, 'out')], { env: { TRACE_INSPECTOR_CONFIG_DIR: configDir } });
    const said = describeRefusal(run);
    expect(run.status, said).toBe(2);
    expect(run.stderr, said).toContain('provenance.model.weights_file');
    expect(run.stderr, said).toContain('outside the bundle folder and every weights root');
    expect(run.stderr + run.stdout, said).not.toContain(targets.outsideSha256);
  });

  it('the same weights are accepted once their folder is listed in TRACE_INSPECTOR_WEIGHTS_ROOTS (and then only their digest decides)', async () => {
    const scratch = tempDir('weights-root');
    const bundle = copyBundle(join(scratch, 'bundle'), (manifest) => {
      manifest.provenance.model.weights_file = targets.outsideFile;
    });
    const run = await runCliBounded(['capture', '--bundle', bundle, '--out', join(scratch, 'out')], {
      env: { TRACE_INSPECTOR_CONFIG_DIR: configDir, TRACE_INSPECTOR_WEIGHTS_ROOTS: join(targets.outsideFile, '..') },
    });
    const said = describeRefusal(run);
    // Inside a listed root the file is read and hashed: it is not the bundle's weights.
    expect(run.status, said).toBe(2);
    expect(run.stderr, said).toContain('provenance.model.weights_sha256');
    expect(run.stderr, said).toContain(targets.outsideSha256);
  });
});

describe('--key advice', () => {
  it('--key /dev/zero is refused as a device, never advised to chmod', async () => {
    const scratch = tempDir('key-advice');
    const run = await runCliBounded([...gateArgs(scratch), '--key', '/dev/zero'], { env: { TRACE_INSPECTOR_CONFIG_DIR: configDir } });
    const said = describeRefusal(run);
    expect(run.status, said).toBe(2);
    expect(run.stderr, said).toContain('/dev/zero');
    expect(run.stderr, said).toContain('character device');
    expect(run.stderr, said).not.toContain('chmod');
  });
});
