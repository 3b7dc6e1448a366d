// Subjects and the files on disk: hashing a file into a subject when a receipt is written, and,
// when one is verified, finding the file for each subject among the files and folders the user
// gave and re-hashing it.
//
// Matching is by the subject's recorded path, never by its base name alone: a folder D holds
// subject "a/b/c.json" at D/a/b/c.json, or — when D itself is (a copy of) a folder of that path —
// at D/b/c.json if D ends in "a", at D/c.json if D ends in "a/b". So every bundle folder of a
// receipt naming nine "<case>/reference/manifest.json" subjects holds exactly its own, not all
// nine. A file F is the subject whose name is the longest whole-segment suffix of F's path
// ("b.bin" or "a/b.bin" for /x/a/b.bin). Subject names are
// lexically confined (no "..", not absolute: in-toto.ts), so a receipt cannot point the
// verifier outside the folders it was given; symlinks inside those folders are the user's own.
import { stat } from 'node:fs/promises';
import { basename, join, resolve, sep } from 'node:path';
import { sha256File } from '../bundle/digest.ts';
import { ReceiptError, describeFsError, errnoCode } from './errors.ts';
import type { Subject } from './in-toto.ts';

export interface SubjectCheck {
  name: string;
  /** The file that was hashed. */
  file: string;
  expected: string;
  actual: string;
  ok: boolean;
}

export interface SubjectFilesResult {
  /** One per subject a file was found for, in the statement's subject order. */
  checks: SubjectCheck[];
  /** Names of subjects no given file or folder held (not a failure: the user checks a part). */
  notChecked: string[];
  /**
   * Of notChecked, the subjects looked for and not found because folders were given (none of
   * them holds the subject at its recorded path); the rest had no file given at all.
   */
  notFound: string[];
  /** Failures: a changed file, a file that is no subject, a folder holding none, ambiguity. */
  reasons: string[];
}

/** The subject for `file`: its sha256, named `name` (default: the file's base name). */
export async function hashSubject(file: string, name: string = basename(file)): Promise<Subject> {
  try {
    const { sha256 } = await sha256File(file);
    return { name, digest: { sha256 } };
  } catch (error) {
    throw new ReceiptError('E_SUBJECT_READ', file, `cannot hash the subject file: ${describeFsError(error)}`, { cause: error });
  }
}

type Kind = 'file' | 'folder' | 'other' | 'missing';

async function kindOf(path: string, mustExist: boolean): Promise<Kind> {
  try {
    const info = await stat(path);
    return info.isFile() ? 'file' : info.isDirectory() ? 'folder' : 'other';
  } catch (error) {
    if (!mustExist && (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR')) return 'missing';
    throw new ReceiptError('E_SUBJECT_READ', path, `cannot read the subject path: ${describeFsError(error)}`, { cause: error });
  }
}

/** The subject whose name is the longest whole-segment suffix of `file`'s path, if any. */
function subjectForFile(subjects: readonly Subject[], file: string): Subject | undefined {
  const segments = resolve(file).split(sep);
  let best: Subject | undefined;
  let bestLength = 0;
  for (const subject of subjects) {
    const nameSegments = subject.name.split('/');
    const tail = segments.slice(-nameSegments.length);
    if (nameSegments.length > bestLength && tail.join('/') === subject.name) {
      best = subject;
      bestLength = nameSegments.length;
    }
  }
  return best;
}

/**
 * Where folder `dir` may hold subject `name`, by its recorded path: dir/<name>, then, for each
 * leading part of the name that `dir` itself ends with, dir/<the rest>.
 */
function candidatesInFolder(dir: string, name: string): string[] {
  const nameSegments = name.split('/');
  const dirSegments = resolve(dir).split(sep);
  const candidates = [join(dir, ...nameSegments)];
  for (let k = 1; k < nameSegments.length; k++) {
    const lead = nameSegments.slice(0, k);
    const tail = dirSegments.slice(-k);
    if (tail.length === k && tail.join('/') === lead.join('/')) candidates.push(join(dir, ...nameSegments.slice(k)));
  }
  return candidates;
}

/**
 * Finds and re-hashes the files of `subjects` among `paths` (files or folders). A path that
 * cannot be read at all is a ReceiptError (E_SUBJECT_READ); everything else is reported.
 */
export async function checkSubjectFiles(subjects: readonly Subject[], paths: readonly string[]): Promise<SubjectFilesResult> {
  const reasons: string[] = [];
  let foldersGiven = false;
  const assigned = new Map<string, string>(); // subject name -> resolved file

  const assign = (subject: Subject, file: string): void => {
    const previous = assigned.get(subject.name);
    if (previous !== undefined && previous !== file) {
      reasons.push(`subject "${subject.name}" is matched by two files, ${previous} and ${file}; give only one`);
      return;
    }
    assigned.set(subject.name, file);
  };

  for (const given of paths) {
    const path = resolve(given);
    const kind = await kindOf(path, true);
    if (kind === 'file') {
      const subject = subjectForFile(subjects, path);
      if (subject === undefined) {
        reasons.push(`${given} is not a subject of this receipt (its subjects are ${subjects.map((s) => `"${s.name}"`).join(', ')})`);
      } else {
        assign(subject, path);
      }
    } else if (kind === 'folder') {
      foldersGiven = true;
      let found = 0;
      for (const subject of subjects) {
        for (const candidate of candidatesInFolder(path, subject.name)) {
          const candidateKind = await kindOf(candidate, false);
          if (candidateKind === 'missing') continue;
          if (candidateKind !== 'file') {
            reasons.push(`subject "${subject.name}": ${candidate} is not a regular file`);
          } else {
            assign(subject, candidate);
          }
          found += 1;
          break;
        }
      }
      if (found === 0) reasons.push(`no subject of this receipt is in the folder ${given} (looked for ${subjects.map((s) => `"${s.name}"`).join(', ')})`);
    } else {
      reasons.push(`${given} is neither a regular file nor a folder`);
    }
  }

  const checks: SubjectCheck[] = [];
  const notChecked: string[] = [];
  for (const subject of subjects) {
    const file = assigned.get(subject.name);
    if (file === undefined) {
      notChecked.push(subject.name);
      continue;
    }
    const actual = (await hashSubject(file, subject.name)).digest.sha256;
    const ok = actual === subject.digest.sha256;
    checks.push({ name: subject.name, file, expected: subject.digest.sha256, actual, ok });
    if (!ok) reasons.push(`subject "${subject.name}" changed: ${file} has sha256 ${actual}, the receipt says ${subject.digest.sha256}`);
  }
  return { checks, notChecked, notFound: foldersGiven ? [...notChecked] : [], reasons };
}
