// The one bundle-builder for tests: writes a complete bundle (inputs, one safetensors file per
// pass, manifest.json) from a spec, in a folder the test chose (never in fixtures/). The writer
// under test is main/core/bundle; this builds the manifest by hand so a test can give any boundary
// any dtype, shape, stride, contract and valid region, and any provenance.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DTYPE_SIZE, elementCount, type DType } from '../../main/core/bundle/dtype.ts';
import { contiguousStrides, layoutOf } from '../../main/core/bundle/layout.ts';
import type { BundleKind, BundleManifest, Contract, KnownGap, PassKind, PassMode, ValidRegion } from '../../main/core/bundle/manifest-schema.ts';
import { writeSafetensorsFile } from '../../main/core/bundle/safetensors-writer.ts';

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

export interface TensorSpec {
  name: string;
  stage: string;
  dtype: DType;
  shape: number[];
  /** Default: row-major. */
  strides?: number[];
  data: Uint8Array;
  contract?: Contract | null;
  valid?: ValidRegion | null;
}

export interface PassSpec {
  kind: PassKind;
  mode: PassMode | null;
  boundaries: TensorSpec[];
}

export interface BundleSpec {
  kind: BundleKind;
  caseId: string;
  description?: string;
  weightsFile: string;
  weightsSha256: string;
  inputs: { name: string; dtype: DType; shape: number[]; data: Uint8Array }[];
  passes: PassSpec[];
  knownGaps?: KnownGap[];
  /** case.pass_count as the generator states it; absent: not stated (bundles before the field). */
  passCount?: number;
  /** The whole provenance block; absent: a hand-written test generator's. */
  provenance?: BundleManifest['provenance'];
}

function provenanceOf(spec: BundleSpec): BundleManifest['provenance'] {
  const common = {
    model: { name: 'toy', checkpoint_revision: 'toy@test', weights_file: spec.weightsFile, weights_sha256: spec.weightsSha256 },
    generator: { implementation: 'tests/helpers/bundle-builder.ts', revision: '0000000', dirty: true, command: 'vitest' },
    created_at: '2026-12-02T10:00:00Z',
  };
  if (spec.kind === 'native') {
    return {
      ...common,
      runtime: {
        node: process.version,
        engine_name: 'hand-written',
        engine_version: '0',
        engine_build_id: 'test',
        engine_library_sha256: sha256(new Uint8Array([0])),
        engine_abi_version: 1,
      },
      precision: 'native',
    };
  }
  return { ...common, runtime: { torch: 'test', python: 'test' }, precision: spec.kind === 'reference' ? 'float32' : 'float64' };
}

/** Writes a complete bundle (inputs, one safetensors file per pass, manifest.json) into `dir`. */
export function writeBundle(dir: string, spec: BundleSpec): string {
  mkdirSync(dir, { recursive: true });
  const files: BundleManifest['files'] = [];
  const inputsFile = writeSafetensorsFile(
    join(dir, 'inputs.safetensors'),
    spec.inputs.map((input) => ({ key: input.name, dtype: input.dtype, shape: input.shape, data: input.data })),
  );
  files.push({ path: 'inputs.safetensors', sha256: inputsFile.sha256, bytes: inputsFile.bytes });
  const passes: BundleManifest['passes'] = spec.passes.map((pass, index) => {
    const file = `pass-${String(index).padStart(3, '0')}.safetensors`;
    const written = writeSafetensorsFile(
      join(dir, file),
      pass.boundaries.map((boundary) => ({ key: boundary.name, dtype: boundary.dtype, shape: boundary.shape, data: boundary.data })),
    );
    files.push({ path: file, sha256: written.sha256, bytes: written.bytes });
    return {
      index,
      kind: pass.kind,
      mode: pass.mode,
      file,
      boundaries: pass.boundaries.map((boundary) => {
        const strides = boundary.strides ?? contiguousStrides(boundary.shape);
        if (boundary.data.byteLength !== elementCount(boundary.shape) * DTYPE_SIZE[boundary.dtype]) {
          throw new Error(`test fixture: ${boundary.name} has ${boundary.data.byteLength} bytes for ${boundary.dtype} [${boundary.shape.join(', ')}]`);
        }
        return {
          name: boundary.name,
          stage: boundary.stage,
          dtype: boundary.dtype,
          shape: boundary.shape,
          strides,
          layout: layoutOf(boundary.shape, strides),
          key: boundary.name,
          sha256: sha256(boundary.data),
          byte_length: boundary.data.byteLength,
          valid: boundary.valid ?? null,
          contract: spec.kind === 'native' ? null : (boundary.contract ?? null),
        };
      }),
    };
  });
  const manifest: BundleManifest = {
    schema: 'trace-inspector.bundle',
    schema_version: 1,
    kind: spec.kind,
    case: {
      id: spec.caseId,
      description: spec.description ?? `test case ${spec.caseId}`,
      ...(spec.passCount !== undefined ? { pass_count: spec.passCount } : {}),
    },
    provenance: spec.provenance ?? provenanceOf(spec),
    inputs: spec.inputs.map((input) => ({
      name: input.name,
      dtype: input.dtype,
      shape: input.shape,
      file: 'inputs.safetensors',
      key: input.name,
      sha256: sha256(input.data),
    })),
    passes,
    known_gaps: spec.knownGaps ?? [],
    files,
    ...(spec.kind === 'native' ? { run: { status: 'completed' as const, message: '', last_pass: passes.length - 1, last_boundary: null } } : {}),
  };
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}
