// One input-error class for every command: what it keeps when it travels up (file, field, cause)
// and how the CLI answers it (exit 2, the message on stderr, nothing on stdout).
import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../main/core/io/input-error.ts';
import { readJsonInput } from '../../main/core/io/json-input-file.ts';
import { z } from 'zod';
import { freshTempDir, oracleBundle, referenceBundle } from '../helpers/paths.ts';
import { runCli } from '../../main/cli/run-cli.ts';
import { recordingIO } from '../gate/gate-fixtures.ts';

const root = freshTempDir('input-error');

describe('InputError', () => {
  it('names the file and the field, and keeps both (and the cause) when a context is put in front', () => {
    const cause = new Error('underneath');
    const error = new InputError('x', null, cause);
    expect(error.cause).toBe(cause);
    const at = InputError.at('/tmp/map.json', 'map[2].permute', 'is not a permutation');
    expect(at.message).toBe('/tmp/map.json: map[2].permute: is not a permutation');
    const outer = at.within('--gate').within('case speech');
    expect(outer.message).toBe('case speech: --gate: /tmp/map.json: map[2].permute: is not a permutation');
    expect([outer.file, outer.field]).toEqual(['/tmp/map.json', 'map[2].permute']);
    expect(outer).toBeInstanceOf(InputError);
  });

  it('a JSON input file with a bad field becomes an InputError naming that file and field', async () => {
    const file = join(root, 'contracts.json');
    writeFileSync(file, JSON.stringify({ rules: [{ boundaries: 7 }] }));
    const schema = z.object({ rules: z.array(z.object({ boundaries: z.string() })) });
    const error = await readJsonInput(file, schema, 'contracts file').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).file).toBe(file);
    expect((error as InputError).field).toBe('rules[0].boundaries');
  });

  it('every command answers bad input alike: exit 2, the message on stderr naming what is wrong, stdout empty', async () => {
    const map = join(root, 'bad-map.json');
    writeFileSync(map, '{"schema": "trace-inspector.boundary-map", "schema_version": 1, "map": [{"candidate": "a.*", "reference": "b", "permute": [0, 0]}]}');
    for (const argv of [
      ['compare', referenceBundle('speech'), oracleBundle('speech'), '--map', map],
      ['capture', '--no-such-flag'],
      ['verify'],
      ['gate', '--bundle', map],
      ['merge'],
    ]) {
      const io = recordingIO(root);
      expect(await runCli(argv, io), argv.join(' ')).toBe(2);
      expect(io.out.join(''), argv.join(' ')).toBe('');
      expect(io.err.join(''), argv.join(' ')).toMatch(/^trace-inspector: /m);
      if (argv[0] === 'compare') expect(io.err.join('')).toContain(`${map}: map[0].permute:`);
    }
  });
});
