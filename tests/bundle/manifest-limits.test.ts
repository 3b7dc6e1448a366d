// A manifest with 200,000 invalid boundaries used to overflow the stack inside zod (it spreads
// nested issue lists into their parent's). Entries are now checked one at a time: the error
// lists the first 100 problems and where it stopped checking, in bounded time.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BundleError } from '../../main/core/bundle/errors.ts';
import { MAX_REPORTED_ISSUES, parseManifest } from '../../main/core/bundle/manifest-schema.ts';
import { referenceBundle } from '../helpers/paths.ts';

const committed = (): Record<string, unknown> & { passes: { boundaries: Record<string, unknown>[] }[] } =>
  JSON.parse(readFileSync(join(referenceBundle('greedy'), 'manifest.json'), 'utf8')) as Record<string, unknown> & {
    passes: { boundaries: Record<string, unknown>[] }[];
  };

function errorOf(raw: unknown): BundleError {
  try {
    parseManifest(raw, 'manifest.json');
  } catch (error) {
    if (error instanceof BundleError) return error;
    throw error;
  }
  throw new Error('the manifest was accepted');
}

describe('manifests with very many invalid entries', () => {
  it.each([
    [
      'boundaries of one pass',
      (m: ReturnType<typeof committed>) =>
        (m.passes[0]!.boundaries = Array.from({ length: 200_000 }, (_, i) => ({ ...m.passes[0]!.boundaries[0], name: `b${i}`, dtype: 'X99' }))),
    ],
    ['files', (m: ReturnType<typeof committed>) => (m['files'] = Array.from({ length: 200_000 }, () => ({ path: '', sha256: 'no', bytes: -1 })))],
    ['passes', (m: ReturnType<typeof committed>) => (m.passes = Array.from({ length: 200_000 }, () => ({ index: -1 }) as never))],
  ])('200,000 invalid %s: a BundleError listing the first 100 problems and where checking stopped, no stack overflow', (_label, spoil) => {
    const manifest = committed();
    spoil(manifest);
    const error = errorOf(manifest);
    expect(error.code).toBe('E_MANIFEST_SCHEMA');
    expect(error.issues).toHaveLength(MAX_REPORTED_ISSUES + 1);
    expect(error.issues.at(-1)?.message).toMatch(/^and more problems: checking stopped at \S+ after the first 100/);
    expect(error.message.split('\n').length).toBeLessThan(110);
  });

  it('a few invalid entries are all reported as before (provenance first)', () => {
    const manifest = committed();
    manifest.passes[0]!.boundaries[0]!['dtype'] = 'X99';
    delete (manifest['provenance'] as Record<string, Record<string, unknown>>)['model']!['weights_sha256'];
    const error = errorOf(manifest);
    expect(error.code).toBe('E_PROVENANCE');
    expect(error.issues.map((issue) => issue.field)).toEqual(['provenance.model.weights_sha256', 'passes[0].boundaries[0].dtype']);
  });
});
