// A library that cannot be used as an engine is refused at start with an EngineLoadError that
// names the library path and the symbol or describe() field at fault, and leaves nothing running.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EngineLoadError } from '../../main/engine-host/engine-errors.ts';
import { EngineHost, type Isolation } from '../../main/engine-host/engine-host.ts';
import { freshTempDir } from '../helpers/paths.ts';
import { requireBuiltHost, testlib } from './engine-host-fixtures.ts';

beforeAll(() => requireBuiltHost());

async function loadError(library: string, isolation: Isolation = 'process'): Promise<EngineLoadError> {
  const outcome = await EngineHost.start({ library, isolation }).then(
    async (host) => {
      await host.close();
      return new Error(`${library} loaded`);
    },
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(EngineLoadError);
  const error = outcome as EngineLoadError;
  expect(error.library).toBe(library);
  expect(error.message).toContain(library);
  return error;
}

describe.each<Isolation>(['process', 'thread'])('load errors, %s isolation', (isolation) => {
  it('a missing file', async () => {
    const library = join(freshTempDir('no-engine'), 'libmissing.so');
    const error = await loadError(library, isolation);
    expect(error.failure).toBe('missing_file');
    expect(error.message).toMatch(/no such file/);
  });

  it('a file that is not a shared library', async () => {
    const library = join(freshTempDir('not-elf'), 'libtext.so');
    writeFileSync(library, 'this is not an ELF file\n');
    const error = await loadError(library, isolation);
    expect(error.failure).toBe('not_shared_library');
  });

  it('a shared library without the ti_ symbols', async () => {
    const error = await loadError(testlib('not_an_engine'), isolation);
    expect(error).toMatchObject({ failure: 'missing_symbol', symbol: 'ti_abi_version' });
    expect(error.message).toContain('not a trace-inspector engine: symbol ti_abi_version missing');
  });

  it('an engine of ABI version 2', async () => {
    const error = await loadError(testlib('abi2_engine'), isolation);
    expect(error).toMatchObject({ failure: 'abi_version', symbol: 'ti_abi_version' });
    expect(error.message).toMatch(/ti_abi_version\(\) is 2; this host speaks trace ABI 1/);
  });

  it('a describe() that is not JSON', async () => {
    const error = await loadError(testlib('bad_describe_engine'), isolation);
    expect(error).toMatchObject({ failure: 'describe_json', symbol: 'ti_describe' });
    expect(error.message).toMatch(/malformed JSON/);
  });

  it('a describe() that breaks the catalogue schema names every field', async () => {
    const error = await loadError(testlib('bad_catalogue_engine'), isolation);
    expect(error).toMatchObject({ failure: 'describe_schema', symbol: 'ti_describe', field: 'inputs[0].shape' });
    expect(error.message).toContain('inputs[0].shape: missing');
    expect(error.message).toContain('boundaries[1].dtype: unknown dtype "f99"');
  });
});
