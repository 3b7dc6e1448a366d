// A read-only view of a native capture that is still being written: the app judges each pass as
// soon as it is sealed, long before the capture finishes and writes manifest.json. The view is
// built from what the writer has already made durable — the journal's header and pass seals, and
// the sealed pass-NNN.safetensors files — into the manifest the finished bundle would have (same
// builder, buildNativeManifest), and opened with the reader's own checks. The pass being written
// (a pass_begin without its seal, its spill) is not part of the view.
//
// The journal is read, never written: the capture's owner (possibly another process) keeps
// appending to it. A line is only trusted once its newline is on disk (parseJournal).
import { GuardedReadError, readRegularFile } from '../io/guarded-read.ts';
import { join } from 'node:path';
import { openBundleFromManifest, type OpenBundleOptions, type TraceBundle } from './bundle-reader.ts';
import { JOURNAL_FILE_NAME, MAX_JOURNAL_BYTES, parseJournal, type JournalHeader } from './capture-journal.ts';
import { BundleError } from './errors.ts';
import { parseManifest, type RunOutcome } from './manifest-schema.ts';
import { boundaryOfRecord, buildNativeManifest, type SealedPass } from './native-manifest.ts';

/** The run outcome a view of an unfinished capture carries: not an ending, a statement that there is none yet. */
function inProgressOutcome(sealed: readonly SealedPass[]): RunOutcome {
  const last = sealed.at(-1);
  return {
    status: 'aborted',
    message: `capture in progress: a read-only view of ${sealed.length} sealed pass${sealed.length === 1 ? '' : 'es'}, not a finished bundle`,
    last_pass: last?.index ?? null,
    last_boundary: last?.boundaries.at(-1)?.name ?? null,
  };
}

/**
 * Opens the sealed passes of the capture in progress in `dir` as a TraceBundle. Its manifestPath
 * is the journal (what the manifest was built from). By default files are not re-hashed on open
 * (every tensor's own sha256 is still checked on each read): the view is rebuilt after every
 * pass, and re-hashing every sealed file each time would make a long run quadratic.
 */
export async function openCaptureInProgress(dir: string, options: OpenBundleOptions = { verify: 'none' }): Promise<TraceBundle> {
  const journalPath = join(dir, JOURNAL_FILE_NAME);
  let text: string;
  try {
    text = (await readRegularFile(journalPath, MAX_JOURNAL_BYTES)).toString('utf8');
  } catch (cause) {
    if (cause instanceof GuardedReadError && cause.problem !== 'missing') {
      throw new BundleError('E_JOURNAL', journalPath, '(file)', `the capture journal ${cause.reason}`, { cause });
    }
    throw new BundleError('E_JOURNAL', journalPath, '(file)', 'cannot read the capture journal: no capture is in progress in this folder', { cause });
  }
  const { lines } = parseJournal(text, journalPath);
  const [first, ...rest] = lines;
  if (first === undefined || first.t !== 'header') throw new BundleError('E_JOURNAL', journalPath, 'line 1', 'the header line is missing');
  const header: JournalHeader = first;
  const kinds = new Map<number, SealedPass['kind']>();
  const sealed: SealedPass[] = [];
  rest.forEach((line, i) => {
    const where = `line ${i + 2}`;
    switch (line.t) {
      case 'header':
        throw new BundleError('E_JOURNAL', journalPath, where, 'a second header line');
      case 'pass_begin':
        kinds.set(line.pass, line.kind);
        return;
      case 'pass_sealed': {
        const kind = kinds.get(line.pass);
        if (kind === undefined || line.pass !== sealed.length)
          throw new BundleError('E_JOURNAL', journalPath, where, `seal of pass ${line.pass} does not match the journal`);
        sealed.push({ index: line.pass, kind, mode: line.mode, file: line.file, boundaries: line.boundaries.map(boundaryOfRecord) });
        return;
      }
    }
  });
  // The reader's own schema rules, as for a manifest.json on disk.
  const manifest = parseManifest(JSON.parse(JSON.stringify(buildNativeManifest(header, sealed, inProgressOutcome(sealed)))), journalPath);
  return openBundleFromManifest(dir, manifest, journalPath, options);
}
