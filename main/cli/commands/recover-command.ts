// `trace-inspector recover <dir>`: seals what an interrupted capture left in a folder (its
// process was killed, the machine went down, the disk filled up) into a bundle. Every sealed
// pass is kept as it is; the pass in flight is sealed from its whole records; manifest.json
// records the run as "aborted" with what happened. Refuses while a capture still writes there.
import { existsSync, lstatSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { CAPTURE_LOCK_FILE_NAME, lockHolderAlive, readCaptureLock } from '../../core/bundle/capture-lock.ts';
import { JOURNAL_FILE_NAME } from '../../core/bundle/capture-journal.ts';
import { openBundle } from '../../core/bundle/bundle-reader.ts';
import { BundleError } from '../../core/bundle/errors.ts';
import { MANIFEST_FILE_NAME } from '../../core/bundle/manifest-schema.ts';
import { recoverNativeBundle } from '../../core/bundle/native-bundle-recovery.ts';
import { EXIT_OK, type CliIO } from '../cli-io.ts';
import { parseCommandArgs } from '../command-args.ts';
import { InputError } from '../../core/io/input-error.ts';

export const RECOVER_USAGE = `usage: trace-inspector recover <dir>

Seals an interrupted capture (a folder with capture.journal.jsonl and no manifest.json, left by a
killed capture, a crash or a full disk) into a bundle: sealed passes are kept, the pass in flight
is sealed from its whole records, and manifest.json records the run as "aborted". A finished
bundle is left as it is. Refused while the capture that holds the folder's capture.lock still
runs. Exit 0 when the folder holds a bundle afterwards, 2 when it cannot. See docs/capture.md.
`;

const RecoverArgsSchema = z.object({ dir: z.array(z.string().min(1)).length(1, { error: 'expected exactly one folder (trace-inspector recover <dir>)' }) });

function parseRecoverArgs(argv: readonly string[]): string {
  return parseCommandArgs('recover', argv, RecoverArgsSchema, { positionals: 'dir' }).dir[0] as string;
}

export async function runRecoverCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const dir = resolve(io.cwd, parseRecoverArgs(argv));
  let info;
  try {
    info = lstatSync(dir);
  } catch {
    throw new InputError(`recover: ${dir}: no such folder`);
  }
  if (!info.isDirectory()) throw new InputError(`recover: ${dir}: not a folder`);
  const journal = join(dir, JOURNAL_FILE_NAME);
  const manifest = join(dir, MANIFEST_FILE_NAME);
  if (!existsSync(journal)) {
    if (!existsSync(manifest)) throw new InputError(`recover: ${dir}: holds no capture (neither ${JOURNAL_FILE_NAME} nor ${MANIFEST_FILE_NAME})`);
    io.stdout(`${dir}: already a finished bundle (${MANIFEST_FILE_NAME}); nothing to recover\n`);
    return EXIT_OK;
  }
  const lock = readCaptureLock(dir);
  if (lock !== null && lockHolderAlive(lock)) {
    throw new InputError(
      `recover: ${dir}: a capture is still writing here (pid ${lock.pid}, started ${lock.started_at}); stop it first (Ctrl+C finishes it as aborted)`,
    );
  }
  let manifestPath: string;
  try {
    manifestPath = recoverNativeBundle(dir, {
      status: 'aborted',
      message: 'the capture was interrupted before it finished (its process ended without writing the manifest); recovered by trace-inspector recover',
    });
  } catch (error) {
    if (error instanceof BundleError) throw new InputError(`recover: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code === 'string') throw new InputError(`recover: ${dir}: ${code}: ${(error as Error).message}`);
    throw error;
  }
  if (existsSync(join(dir, CAPTURE_LOCK_FILE_NAME))) {
    unlinkSync(join(dir, CAPTURE_LOCK_FILE_NAME));
  }
  // The recovered bundle opens with every check a bundle gets.
  try {
    const bundle = await openBundle(dir);
    const passes = bundle.passes.length;
    const records = bundle.passes.reduce((sum, pass) => sum + pass.boundaries.length, 0);
    const run = bundle.manifest.run;
    await bundle.close();
    io.stdout(
      `recovered ${dir}: ${passes} pass${passes === 1 ? '' : 'es'}, ${records} records; run ${run?.status ?? 'unknown'}: ${run?.message ?? ''}\n${manifestPath}\n`,
    );
  } catch (error) {
    if (error instanceof BundleError) throw new InputError(`recover: the recovered bundle does not open: ${error.message}`);
    throw error;
  }
  return EXIT_OK;
}
