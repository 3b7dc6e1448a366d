// Assembles and writes the manifest.json of a native bundle, shared by a capture that finishes
// normally and by the recovery of one whose process died.
import { closeSync, openSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { JournalBoundary, JournalHeader } from './capture-journal.ts';
import { layoutOf } from './layout.ts';
import { tempPathBeside } from './temp-name.ts';
import {
  BUNDLE_SCHEMA_NAME,
  BUNDLE_SCHEMA_VERSION,
  MANIFEST_FILE_NAME,
  parseManifest,
  type BoundaryEntry,
  type BundleManifest,
  type FileEntry,
  type PassKind,
  type PassMode,
  type RunOutcome,
} from './manifest-schema.ts';
import { publishWithoutOverwrite, writeAllSync } from './safetensors-writer.ts';

export interface SealedPass {
  readonly index: number;
  readonly kind: PassKind;
  readonly mode: PassMode | null;
  readonly file: FileEntry;
  readonly boundaries: readonly BoundaryEntry[];
}

export function boundaryOfRecord(record: JournalBoundary): BoundaryEntry {
  return {
    name: record.name,
    stage: record.stage,
    dtype: record.dtype,
    shape: record.shape,
    strides: record.strides,
    layout: layoutOf(record.shape, record.strides),
    key: record.name,
    sha256: record.sha256,
    byte_length: record.byte_length,
    valid: null,
    contract: null,
  };
}

export function buildNativeManifest(header: JournalHeader, passes: readonly SealedPass[], run: RunOutcome): BundleManifest {
  return {
    schema: BUNDLE_SCHEMA_NAME,
    schema_version: BUNDLE_SCHEMA_VERSION,
    kind: 'native',
    case: header.case,
    provenance: header.provenance,
    inputs: header.inputs,
    passes: passes.map((pass) => ({ index: pass.index, kind: pass.kind, mode: pass.mode, file: pass.file.path, boundaries: [...pass.boundaries] })),
    known_gaps: header.known_gaps,
    files: [header.inputs_file, ...passes.map((pass) => pass.file)],
    run,
    ...(header.digests === undefined ? {} : { digests: header.digests }),
  };
}

/**
 * Validates the manifest with the reader's own rules (a writer must never produce a bundle the
 * reader rejects) and writes it as `<dir>/manifest.json`, refusing to overwrite one.
 */
export function writeManifestFile(dir: string, manifest: BundleManifest): string {
  const path = join(dir, MANIFEST_FILE_NAME);
  parseManifest(JSON.parse(JSON.stringify(manifest)), path);
  const temp = tempPathBeside(path);
  const fd = openSync(temp, 'wx');
  try {
    writeAllSync(fd, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, 'utf8'), 0);
  } finally {
    closeSync(fd);
  }
  publishWithoutOverwrite(temp, path);
  return path;
}

/**
 * Validates an edited manifest like writeManifestFile, then replaces `<dir>/manifest.json` with
 * it atomically (a temporary file renamed over it), for edits of a finished bundle.
 */
export async function replaceManifestFile(dir: string, manifest: BundleManifest): Promise<string> {
  const path = join(dir, MANIFEST_FILE_NAME);
  parseManifest(JSON.parse(JSON.stringify(manifest)), path);
  const temp = join(dir, `.${MANIFEST_FILE_NAME}.edit-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`, { flag: 'wx' });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return path;
}
