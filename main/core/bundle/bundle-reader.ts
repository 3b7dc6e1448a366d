// Opens a trace bundle: validates manifest.json, confines and digest-checks every file it lists,
// and cross-checks every tensor entry against its safetensors header, all before a single
// tensor is handed to a comparison. Tensors are then read by offset, whole or in chunks, each
// verified: against its own sha256 as it is read, or — when this process verified its file and
// the file's identity has not moved since (file-pins.ts) — by that identity, checked before and
// after the read, so each byte is hashed once and a file changed after the open is still caught.
import { realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { BoundaryIndex } from './boundary-index.ts';
import { JOURNAL_FILE_NAME } from './capture-journal.ts';
import { chunksCovering } from './chunk-digests.ts';
import { sha256Bytes, sha256File } from './digest.ts';
import { chunkDigestOf, schemeOf, streamDigest, tensorDigestOf, type DigestScheme } from './tree-digest.ts';
import { ctimeSettled, identityKey, pinOf, recordManifestDigest, REHASH_ENV } from './file-pins.ts';
import { verifyTreeFilesFed } from './fed-verification.ts';
import { LeafFeed } from './leaf-feed.ts';
import { knownManifestAt, parsedManifest, rememberParsedManifest } from './parsed-manifests.ts';
import type { DType } from './dtype.ts';
import { BundleError, formatFieldPath, type BundleIssue } from './errors.ts';
import { contiguousStrides } from './layout.ts';
import { MANIFEST_FILE_NAME, parseManifestJson, type BoundaryEntry, type BundleManifest, type InputEntry, type PassEntry } from './manifest-schema.ts';
import { checkDeclaredPadding } from './padding-check.ts';
import { GuardedReadError, readRegularFile } from '../io/guarded-read.ts';
import { resolveInsideBundle } from './path-confinement.ts';
import { verifyBundleFiles } from './verify-bundle-files.ts';
import { insideSomeRoot, weightsRoots, WEIGHTS_ROOTS_ENV } from './weights-roots.ts';
import { DEFAULT_CHUNK_BYTES, SafetensorsFile } from './safetensors-reader.ts';

/** A manifest larger than this is refused before it is parsed. */
export const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;
/** Safetensors files kept open at once while reading tensors. */
const OPEN_FILE_LIMIT = 16;

export interface OpenBundleOptions {
  /**
   * 'files' (default): hash every listed file and compare with files[].sha256 before returning.
   * 'none': only existence and sizes (the per-tensor sha256 is still checked on every read).
   * 'deferred': every file is hashed on the worker pool while the caller already reads (a
   * comparison runs beside the verification instead of after it): reads before the verification
   * ends are not hashed, their file's identity is recorded instead, and nothing read may be
   * concluded from until `settleVerification()` has resolved true (every digest matched, every
   * file read was pinned with the identity it was read under). TRACE_INSPECTOR_REHASH=always
   * makes it 'files'.
   */
  readonly verify?: 'files' | 'none' | 'deferred';
  /**
   * The bundle is evidence a run is judged against (a reference or an oracle, opened by the gate,
   * capture or the app): check that its own padding past `valid` keeps the declared policy
   * (padding "zero"), E_PADDING otherwise. Default false: other readers (the comparator's tests,
   * tools that inspect a bundle) take the tensors as they are.
   */
  readonly checkPadding?: boolean;
  /**
   * 'now' (default): every file's safetensors header is read and checked against the manifest
   * before the bundle is returned. 'lazy': only the files' paths and sizes are checked now; each
   * file's header is checked (with the same checks and errors) before the first tensor of that
   * file is read, and every file's by `checkHeaders()`. A run of many pass files is then usable
   * for its first pass once that pass's header is checked, not after every pass file's: the app's
   * judging workers and its serving thread open a run this way. Ignored with `grownFrom` or
   * `checkPadding`.
   */
  readonly headers?: 'now' | 'lazy';
  /**
   * A bundle opened before (with verify 'none') from a manifest this one extends — the view of a
   * capture in progress, opened again after each pass is sealed: a file it checked whose entry
   * (path, bytes, sha256) and whose pass entries are the same objects, and whose identity (device,
   * inode, size, modification time) has not moved since, is not checked again (its safetensors
   * header not read again). Any other file is checked in full, as without this option, so an
   * earlier pass file that changed between the opens fails with the same error naming it and the
   * field. Ignored unless `verify` is 'none'.
   */
  readonly grownFrom?: TraceBundle;
}

export interface TensorData {
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** As the producer emitted them; `data` is always row-major. */
  readonly strides: readonly number[];
  readonly data: Uint8Array;
}

export interface TraceBundle {
  readonly manifest: BundleManifest;
  /** Absolute path of the bundle folder, as given (symlinks not resolved). */
  readonly dir: string;
  readonly manifestPath: string;
  readonly passes: readonly PassEntry[];
  boundary(passIndex: number, name: string): BoundaryEntry | undefined;
  /** One boundary's bytes, verified against its sha256 (E_DIGEST otherwise). */
  readBoundary(passIndex: number, name: string): Promise<TensorData>;
  /**
   * One boundary in chunks. The sha256 is checked when the last chunk has been delivered: the
   * iteration throws E_DIGEST instead of completing, so a consumer must not conclude anything
   * from the chunks until the loop has ended normally.
   */
  readBoundaryChunks(passIndex: number, name: string, chunkBytes?: number): AsyncGenerator<Uint8Array, void, undefined>;
  /**
   * Bytes [begin, end) of one boundary, verified before they are returned: against the chunk
   * digests that cover the range when the manifest states them (only those chunks are read),
   * else by reading and hashing the whole tensor (E_DIGEST either way).
   */
  readBoundaryRange(passIndex: number, name: string, begin: number, end: number): Promise<Uint8Array>;
  input(name: string): InputEntry | undefined;
  readInput(name: string): Promise<TensorData>;
  /**
   * Opened with verify 'deferred': waits for the verification of every file and rejects with its
   * first problem (E_DIGEST naming the file and field); resolves false when a file read before
   * the verification ended cannot be proven to hold the bytes verified (it changed, or its pin is
   * not trusted: read it again), true otherwise. Other bundles (and views over one): absent or
   * true at once.
   */
  settleVerification?(): Promise<boolean>;
  /**
   * A boundary read window by window straight into the caller's buffers, without hashing, when
   * its file is verified and pinned (or being verified: settleVerification), else null (read it
   * with readBoundaryChunks, which hashes). `finish` checks that the file was not written to
   * meanwhile (E_DIGEST naming the tensor); every opened reader is finished or aborted.
   */
  boundaryWindows?(passIndex: number, name: string): Promise<BoundaryWindows | null>;
  /**
   * Opened with headers 'lazy': checks the header of every file not checked yet (the input files
   * first, then the passes' files in order, one file at a time) and rejects with the first
   * problem (a BundleError naming the file and the field), as the open would have. Other bundles
   * resolve at once (their headers were checked when they were opened).
   */
  checkHeaders?(): Promise<void>;
  close(): Promise<void>;
}

export interface BoundaryWindows {
  /** Fills `dest` with the boundary's bytes from byte `offset` on. */
  read(offset: number, dest: Uint8Array): Promise<void>;
  finish(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * Where a manifest entry's tensor is, once its file's header agreed with the manifest. One per
 * tensor of each open bundle (81,800 for the two bundles of the 10 GiB scale trace), so it holds
 * numbers where it can: its manifest field is spelled out only when a message needs it (the
 * spelled-out fields, built as chains of concatenated strings, and the headers' tensor records
 * were 25 MB of the gate's heap at the end of judging: docs/performance.md).
 */
interface TensorLocation {
  /** Bundle-relative file. */
  readonly file: string;
  readonly key: string;
  readonly sha256: string;
  /**
   * Its file's header as checked at open, to see it unchanged when the file is opened again:
   * dtype and shape are the manifest entry's own (the header had to agree with them).
   */
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** Offset in the data section, and the tensor's bytes. */
  readonly begin: number;
  readonly byteLength: number;
  /** The manifest entry: passes[pass].boundaries[entry], or inputs[entry] when pass is null. */
  readonly pass: number | null;
  readonly entry: number;
}

/** The manifest field of a location's sha256 (or of a field beside it), for messages. */
function manifestFieldOf(location: TensorLocation, ...field: PropertyKey[]): string {
  const at = location.pass === null ? ['inputs', location.entry] : ['passes', location.pass, 'boundaries', location.entry];
  return formatFieldPath([...at, ...field]);
}

/**
 * Why a native bundle is refused where a reference is expected: it holds no contracts, so every
 * boundary would be judged against nothing. With contracts supplied from elsewhere (--contracts,
 * --contract: main/core/compare/reference-contracts.ts) it is admitted.
 */
export const NATIVE_AS_REFERENCE =
  "a native bundle (a captured engine run) cannot be a reference until contracts are supplied (--contracts FILE or --contract bit_exact, docs/compare.md): it declares no contract for any boundary, so nothing could be judged; give the case's reference bundle";

/** Refuses a bundle that is not a reference where one is expected, naming the file and `kind`. */
export function requireReferenceKind(bundle: TraceBundle): void {
  const { kind } = bundle.manifest;
  if (kind === 'reference') return;
  const why = kind === 'native' ? NATIVE_AS_REFERENCE : "an fp64 oracle is judged beside its reference, never instead of it; give the case's reference bundle";
  throw new BundleError('E_MANIFEST_SCHEMA', bundle.manifestPath, 'kind', `is "${kind}", expected "reference": ${why}`);
}

export async function openBundle(dir: string, options: OpenBundleOptions = {}): Promise<TraceBundle> {
  const manifestPath = join(dir, MANIFEST_FILE_NAME);
  const { manifest, real, sha256 } = await readManifestWithDigest(dir, manifestPath);
  const bundle = await openBundleFromManifest(dir, manifest, manifestPath, options);
  // What the closing check (evidence-unchanged.ts) compares the manifest with.
  recordManifestDigest(real, sha256);
  return bundle;
}

/**
 * Opens a bundle whose manifest is already in memory — a capture still in progress has no
 * manifest.json yet (capture-in-progress.ts builds one from its journal) — with exactly the
 * checks openBundle makes: confined paths, sizes, digests (per `verify`), safetensors headers.
 * `manifestPath` is where messages say the manifest came from.
 */
export async function openBundleFromManifest(
  dir: string,
  manifest: BundleManifest,
  manifestPath: string,
  options: OpenBundleOptions = {},
): Promise<TraceBundle> {
  const verify = options.verify ?? 'files';
  const display = (relPath: string): string => join(dir, relPath);
  const grown = verify === 'none' && options.grownFrom !== undefined ? checkedParts.get(options.grownFrom) : undefined;
  const unchanged = grown === undefined ? new Set<string>() : await filesUnchanged(grown, manifest);

  const realPaths = new Map<string, string>(grown?.realPaths);
  const identities = new Map<string, string>();
  for (const [f, entry] of manifest.files.entries()) {
    if (unchanged.has(entry.path)) continue;
    const field = formatFieldPath(['files', f]);
    const real = await resolveInsideBundle(dir, entry.path, { file: manifestPath, field: `${field}.path` });
    realPaths.set(entry.path, real);
    // With nanosecond times: the identity a grown view trusts is the pins' (identityKey), ctime included.
    const info = await stat(real, { bigint: true });
    if (!info.isFile()) throw new BundleError('E_FILE_NOT_REGULAR', display(entry.path), `${field}.path`, 'is not a regular file');
    if (Number(info.size) !== entry.bytes) {
      throw new BundleError(
        'E_FILE_SIZE',
        display(entry.path),
        `${field}.bytes`,
        `${MANIFEST_FILE_NAME} lists ${entry.bytes} bytes, the file holds ${info.size}`,
      );
    }
    identities.set(entry.path, identityKey(info));
  }
  // Every file, its tensors and their chunk digests, hashed on worker threads in one read each.
  const deferred = verify === 'deferred' && process.env[REHASH_ENV] !== 'always';
  if (verify === 'files' || (verify === 'deferred' && !deferred)) await verifyBundleFiles(manifest, realPaths, display);
  let verification: Promise<boolean | void> | null = null;
  // A tree-sha256 bundle read by a comparison meanwhile takes its tensors' leaves from the
  // comparison's reads (fed-verification.ts): each byte read once, and the bytes judged are the
  // bytes hashed. A plain-sha256 bundle's digests cannot be built from leaves: its workers read all.
  const scheme = schemeOf(manifest);
  const feed = deferred && scheme.kind === 'tree' ? new LeafFeed(scheme.chunkBytes) : null;
  if (deferred) {
    verification = feed === null ? verifyBundleFiles(manifest, realPaths, display) : verifyTreeFilesFed(manifest, realPaths, display, feed);
    verification.catch(() => undefined); // settled by settleVerification (or dropped with the bundle)
  }

  if (options.headers === 'lazy' && grown === undefined && options.checkPadding !== true) {
    const headers = new LazyHeaderChecks(manifest, realPaths, display);
    return new BundleReader(manifest, resolve(dir), manifestPath, realPaths, headers.locations, display, verification, feed, headers);
  }
  let checked: Map<string, TensorLocation>;
  try {
    checked = await crossCheckHeaders(manifest, realPaths, display, unchanged);
  } catch (error) {
    feed?.abandon();
    throw error;
  }
  // Grown: the locations of the files checked before are kept (one map shared by the views, which
  // only ever gains entries once a file's check passed), so an open costs what the growth holds.
  const locations = grown === undefined ? checked : grown.locations;
  if (grown !== undefined) {
    for (const [key, location] of checked) locations.set(key, location);
    for (const [path, identity] of identities) grown.identities.set(path, identity);
  }
  const reader = new BundleReader(manifest, resolve(dir), manifestPath, realPaths, locations, display, verification, feed);
  if (verify === 'none') checkedParts.set(reader, { manifest, realPaths, locations, identities: grown?.identities ?? identities });
  if (options.checkPadding === true && manifest.kind !== 'native') {
    // A reference or oracle is the truth a run is judged against: its own padding must keep
    // the policy it declares (a native bundle's padding is judged by the comparison instead).
    try {
      await checkDeclaredPadding(reader, display);
    } catch (error) {
      await reader.close();
      throw error;
    }
  }
  return reader;
}

/** Reads and validates `dir`/manifest.json alone (confined, size-capped, UTF-8, schema and rules). */
export async function readManifest(dir: string, manifestPath: string = join(dir, MANIFEST_FILE_NAME)): Promise<BundleManifest> {
  return (await readManifestWithDigest(dir, manifestPath)).manifest;
}

/** readManifest, with the manifest's real path and the sha256 of the bytes parsed. */
export async function readManifestWithDigest(
  dir: string,
  manifestPath: string = join(dir, MANIFEST_FILE_NAME),
): Promise<{ manifest: BundleManifest; real: string; sha256: string }> {
  let real: string;
  try {
    real = await resolveInsideBundle(dir, MANIFEST_FILE_NAME, { file: manifestPath, field: '(file)' });
  } catch (error) {
    throw (await interruptedCaptureError(dir, manifestPath, error)) ?? error;
  }
  const recognised = await knownManifestAt(real, MAX_MANIFEST_BYTES);
  if (recognised !== null) return { manifest: recognised.manifest, real, sha256: recognised.sha256 };
  const bytes = await readManifestBytes(real, manifestPath);
  const sha256 = sha256Bytes(bytes);
  const known = parsedManifest(sha256);
  if (known !== undefined) return { manifest: known, real, sha256 };
  const manifest = parseManifestJson(manifestText(bytes, manifestPath), manifestPath);
  rememberParsedManifest(sha256, manifest);
  return { manifest, real, sha256 };
}

/**
 * The text of `dir`/manifest.json, read as readManifest reads it (confined, size-capped, UTF-8),
 * not yet parsed: for a reader that validates it against a view it already holds
 * (capture-in-progress.ts, the finished capture grown from its last view).
 */
export async function readManifestText(
  dir: string,
  manifestPath: string = join(dir, MANIFEST_FILE_NAME),
): Promise<{ text: string; real: string; sha256: string }> {
  let real: string;
  try {
    real = await resolveInsideBundle(dir, MANIFEST_FILE_NAME, { file: manifestPath, field: '(file)' });
  } catch (error) {
    throw (await interruptedCaptureError(dir, manifestPath, error)) ?? error;
  }
  const bytes = await readManifestBytes(real, manifestPath);
  return { text: manifestText(bytes, manifestPath), real, sha256: sha256Bytes(bytes) };
}

async function readManifestBytes(real: string, manifestPath: string): Promise<Buffer> {
  try {
    return await readRegularFile(real, MAX_MANIFEST_BYTES);
  } catch (cause) {
    if (!(cause instanceof GuardedReadError)) throw cause;
    const code = cause.problem === 'too_large' ? 'E_MANIFEST_JSON' : cause.problem === 'missing' ? 'E_FILE_MISSING' : 'E_FILE_NOT_REGULAR';
    throw new BundleError(code, manifestPath, '(file)', cause.reason, { cause });
  }
}

function manifestText(bytes: Buffer, manifestPath: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (cause) {
    throw new BundleError('E_MANIFEST_JSON', manifestPath, '(root)', 'is not valid UTF-8', { cause });
  }
}

/**
 * A folder with a capture journal and no manifest holds a capture that never finished (its
 * process was killed, crashed, or the disk filled up): say so, and how to seal it.
 */
async function interruptedCaptureError(dir: string, manifestPath: string, error: unknown): Promise<BundleError | null> {
  if (!(error instanceof BundleError) || error.code !== 'E_FILE_MISSING') return null;
  try {
    if (!(await stat(join(dir, JOURNAL_FILE_NAME))).isFile()) return null;
  } catch {
    return null;
  }
  return new BundleError(
    'E_FILE_MISSING',
    manifestPath,
    '(file)',
    `no ${MANIFEST_FILE_NAME}, but a capture journal (${JOURNAL_FILE_NAME}): this folder holds a capture that was interrupted (or is still running). ` +
      `Run \`trace-inspector recover ${dir}\` to seal its passes into a bundle`,
    { cause: error },
  );
}

const locationKey = (passIndex: number | 'input', name: string): string => `${passIndex}\u0000${name}`;

/** What an open with verify 'none' checked, for an open of the same bundle grown since (OpenBundleOptions.grownFrom). */
interface CheckedParts {
  readonly manifest: BundleManifest;
  readonly realPaths: Map<string, string>;
  readonly locations: Map<string, TensorLocation>;
  /** Each checked file's identity when it was checked (file-pins.ts identityKey: dev, inode, size, mtime, ctime). */
  readonly identities: Map<string, string>;
}

const checkedParts = new WeakMap<TraceBundle, CheckedParts>();

/**
 * The files of `manifest` that `grown` checked and that need no check again: the same file entry,
 * every entry that points into it the same (the inputs, or its pass: the very objects `grown`
 * held, as an extended manifest keeps them), and the same identity on disk now (one stat each).
 */
async function filesUnchanged(grown: CheckedParts, manifest: BundleManifest): Promise<Set<string>> {
  const before = grown.manifest;
  const sameInputs = before.inputs.length === manifest.inputs.length && before.inputs.every((input, i) => input === manifest.inputs[i]);
  const samePasses = new Set<string>();
  manifest.passes.forEach((pass, p) => {
    if (before.passes[p] === pass) samePasses.add(pass.file);
  });
  const inputFiles = new Set(manifest.inputs.map((input) => input.file));
  const passFiles = new Set(manifest.passes.map((pass) => pass.file));
  const previousFiles = new Map(before.files.map((entry) => [entry.path, entry]));
  const candidates = manifest.files.filter((entry) => {
    const then = previousFiles.get(entry.path);
    if (then === undefined || then.bytes !== entry.bytes || then.sha256 !== entry.sha256) return false;
    const holdsInputs = inputFiles.has(entry.path);
    return (holdsInputs ? sameInputs : true) && (samePasses.has(entry.path) || (holdsInputs && !passFiles.has(entry.path)));
  });
  const unchanged = new Set<string>();
  await Promise.all(
    candidates.map(async (entry) => {
      const real = grown.realPaths.get(entry.path);
      if (real === undefined) return;
      const info = await stat(real, { bigint: true }).catch(() => null);
      if (info !== null && info.isFile() && identityKey(info) === grown.identities.get(entry.path)) unchanged.add(entry.path);
    }),
  );
  return unchanged;
}

interface HeaderClaim {
  readonly lookup: string;
  readonly at: readonly PropertyKey[];
  /** The entry's position, as TensorLocation keeps it. */
  readonly pass: number | null;
  readonly entry: number;
  readonly key: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly byteLength: number | null;
  readonly sha256: string;
}

const inputClaim = (input: InputEntry, i: number): HeaderClaim => ({
  lookup: locationKey('input', input.name),
  at: ['inputs', i],
  pass: null,
  entry: i,
  key: input.key,
  dtype: input.dtype,
  shape: input.shape,
  byteLength: null,
  sha256: input.sha256,
});

const passClaims = (pass: PassEntry, p: number): HeaderClaim[] =>
  pass.boundaries.map((boundary, b) => ({
    lookup: locationKey(p, boundary.name),
    at: ['passes', p, 'boundaries', b],
    pass: p,
    entry: b,
    key: boundary.key,
    dtype: boundary.dtype,
    shape: boundary.shape,
    byteLength: boundary.byte_length,
    sha256: boundary.sha256,
  }));

/**
 * Opens one tensor file's header and checks every manifest entry that points into it (and that
 * it holds no tensor the manifest does not list), adding each entry's location to `locations`.
 */
async function checkFileHeader(
  file: string,
  claims: readonly HeaderClaim[],
  realPaths: ReadonlyMap<string, string>,
  display: (relPath: string) => string,
  locations: Map<string, TensorLocation>,
): Promise<void> {
  const real = realPaths.get(file) as string; // parseManifest guarantees every used file is listed
  const tensors = await SafetensorsFile.open(real, { displayName: display(file) });
  await tensors.close();
  const issues: BundleIssue[] = [];
  const claimedKeys = new Set<string>();
  const found: [string, TensorLocation][] = [];
  for (const entry of claims) {
    claimedKeys.add(entry.key);
    const field = (name: string): string => formatFieldPath([...entry.at, name]);
    const header = tensors.tensor(entry.key);
    if (header === undefined) {
      issues.push({ code: 'E_TENSOR_MISSING', field: field('key'), message: `the file has no tensor "${entry.key}"` });
      continue;
    }
    if (header.dtype !== entry.dtype) {
      issues.push({ code: 'E_DTYPE_MISMATCH', field: field('dtype'), message: `manifest says ${entry.dtype}, header["${entry.key}"] says ${header.dtype}` });
    }
    if (header.shape.length !== entry.shape.length || header.shape.some((extent, axis) => extent !== entry.shape[axis])) {
      issues.push({
        code: 'E_SHAPE_MISMATCH',
        field: field('shape'),
        message: `manifest says [${entry.shape.join(', ')}], header["${entry.key}"] says [${header.shape.join(', ')}]`,
      });
    }
    if (entry.byteLength !== null && entry.byteLength !== header.byteLength) {
      issues.push({
        code: 'E_BYTE_LENGTH',
        field: field('byte_length'),
        message: `manifest says ${entry.byteLength}, header["${entry.key}"] spans ${header.byteLength} bytes`,
      });
    }
    found.push([
      entry.lookup,
      {
        file,
        key: entry.key,
        sha256: entry.sha256,
        dtype: entry.dtype,
        shape: entry.shape,
        begin: header.begin,
        byteLength: header.byteLength,
        pass: entry.pass,
        entry: entry.entry,
      },
    ]);
  }
  for (const key of tensors.keys()) {
    if (!claimedKeys.has(key)) {
      issues.push({
        code: 'E_TENSOR_UNLISTED',
        field: formatFieldPath(['header', key]),
        message: `the file holds a tensor that ${MANIFEST_FILE_NAME} does not list`,
      });
    }
  }
  if (issues.length > 0) throw BundleError.fromIssues(display(file), issues);
  // Only a file whose every entry agrees is readable.
  for (const [lookup, location] of found) locations.set(lookup, location);
}

/** Opens each tensor file's header once and checks every manifest entry that points into it. */
async function crossCheckHeaders(
  manifest: BundleManifest,
  realPaths: ReadonlyMap<string, string>,
  display: (relPath: string) => string,
  /** Files already checked, whose claims are not checked again (a bundle this one extends). */
  skip: ReadonlySet<string> = new Set(),
): Promise<Map<string, TensorLocation>> {
  const claimsByFile = new Map<string, HeaderClaim[]>();
  const claim = (file: string, entries: readonly HeaderClaim[]): void => {
    if (skip.has(file)) return;
    const list = claimsByFile.get(file) ?? [];
    for (const entry of entries) list.push(entry);
    claimsByFile.set(file, list);
  };
  manifest.inputs.forEach((input, i) => claim(input.file, [inputClaim(input, i)]));
  // A file already checked is passed over without a claim built for each of its entries; a pass
  // with no boundaries still names a file that must be a valid safetensors file.
  manifest.passes.forEach((pass, p) => claim(pass.file, skip.has(pass.file) ? [] : passClaims(pass, p)));

  const locations = new Map<string, TensorLocation>();
  for (const [file, claims] of claimsByFile) await checkFileHeader(file, claims, realPaths, display, locations);
  return locations;
}

/**
 * The header checks of a bundle opened with headers 'lazy': each file's once, when a tensor of it
 * is first read or when every file is asked for (checkAll), with crossCheckHeaders' own checks.
 * A file's entries get their locations only once its whole header agreed with the manifest.
 */
class LazyHeaderChecks {
  readonly locations = new Map<string, TensorLocation>();
  private readonly checks = new Map<string, Promise<void>>();
  /** Every file with header claims: the input files first, then the passes' files in order. */
  private readonly files = new Set<string>();
  private readonly inputsByFile = new Map<string, number[]>();
  private readonly passesByFile = new Map<string, number[]>();

  constructor(
    private readonly manifest: BundleManifest,
    private readonly realPaths: ReadonlyMap<string, string>,
    private readonly display: (relPath: string) => string,
  ) {
    const add = (byFile: Map<string, number[]>, file: string, at: number): void => {
      const list = byFile.get(file);
      if (list === undefined) byFile.set(file, [at]);
      else list.push(at);
      this.files.add(file);
    };
    manifest.inputs.forEach((input, i) => add(this.inputsByFile, input.file, i));
    manifest.passes.forEach((pass, p) => add(this.passesByFile, pass.file, p));
  }

  /** Checks `file`'s header (once); rejects with its BundleError. */
  check(file: string): Promise<void> {
    let check = this.checks.get(file);
    if (check === undefined) {
      const claims: HeaderClaim[] = [];
      for (const i of this.inputsByFile.get(file) ?? []) claims.push(inputClaim(this.manifest.inputs[i] as InputEntry, i));
      for (const p of this.passesByFile.get(file) ?? []) for (const claim of passClaims(this.manifest.passes[p] as PassEntry, p)) claims.push(claim);
      check = checkFileHeader(file, claims, this.realPaths, this.display, this.locations);
      this.checks.set(file, check);
    }
    return check;
  }

  /** The file a tensor lives in, per the manifest (undefined: no such tensor). */
  fileOf(passIndex: number | 'input', name: string): string | undefined {
    return passIndex === 'input' ? this.manifest.inputs.find((input) => input.name === name)?.file : this.manifest.passes[passIndex]?.file;
  }

  /** Every file's header, one file at a time in order; rejects with the first problem. */
  async checkAll(): Promise<void> {
    for (const file of this.files) await this.check(file);
  }
}

class BundleReader implements TraceBundle {
  readonly passes: readonly PassEntry[];
  private readonly openFiles = new Map<string, { file: Promise<SafetensorsFile>; users: number }>();
  private readonly fileDigests: ReadonlyMap<string, string>;
  private readonly boundaryIndex: BoundaryIndex;
  /** The manifest's digest scheme: how a tensor or chunk read is hashed to check it. */
  private readonly scheme: DigestScheme;
  /** While a deferred verification runs: the identities each file (bundle-relative) was read under. */
  private readonly readUnder = new Map<string, Set<string>>();
  private verificationDone = false;
  /**
   * Set by close(): a read still on its way to its file (past its own checks, before acquire) when
   * the bundle closes — a comparison's read-ahead, abandoned with the comparison — must not open
   * the file again, or the descriptor outlives the bundle and is only closed by the garbage
   * collector (which Node warns of, and will refuse).
   */
  private closed = false;

  constructor(
    readonly manifest: BundleManifest,
    readonly dir: string,
    readonly manifestPath: string,
    private readonly realPaths: ReadonlyMap<string, string>,
    private readonly locations: ReadonlyMap<string, TensorLocation>,
    private readonly display: (relPath: string) => string,
    /** Resolves false when the verification could not prove a file (verify it again). */
    private readonly verification: Promise<boolean | void> | null = null,
    /** While the verification runs: takes the leaves of what the comparison reads (verify 'deferred', tree-sha256). */
    private readonly feed: LeafFeed | null = null,
    /** Opened with headers 'lazy': a file's header is checked before its first read. */
    private readonly lazyHeaders: LazyHeaderChecks | null = null,
  ) {
    this.passes = manifest.passes;
    this.boundaryIndex = new BoundaryIndex(manifest);
    this.fileDigests = new Map(manifest.files.map((entry) => [entry.path, entry.sha256]));
    this.scheme = schemeOf(manifest);
  }

  boundary(passIndex: number, name: string): BoundaryEntry | undefined {
    return this.boundaryIndex.get(passIndex, name);
  }

  input(name: string): InputEntry | undefined {
    return this.manifest.inputs.find((input) => input.name === name);
  }

  async readBoundary(passIndex: number, name: string): Promise<TensorData> {
    const entry = this.requireBoundary(passIndex, name);
    const data = await this.readVerified(await this.locate(passIndex, name));
    return { dtype: entry.dtype, shape: entry.shape, strides: entry.strides, data };
  }

  async *readBoundaryChunks(passIndex: number, name: string, chunkBytes = DEFAULT_CHUNK_BYTES): AsyncGenerator<Uint8Array, void, undefined> {
    this.requireBoundary(passIndex, name);
    const location = await this.locate(passIndex, name);
    const file = await this.acquire(location);
    try {
      const pinned = (await this.pinnedIdentity(location, file)) ?? (await this.provisionalIdentity(location, file));
      if (pinned !== null) {
        // Verified at open and unchanged since (or being verified: settleVerification proves it): the bytes are read once, not hashed again.
        for await (const chunk of file.readTensorChunks(location.key, chunkBytes)) yield chunk;
        if ((await file.identity()) !== pinned) throw this.changedWhileRead(location);
        return;
      }
      const hash = streamDigest(this.scheme);
      for await (const chunk of file.readTensorChunks(location.key, chunkBytes)) {
        hash.update(chunk);
        yield chunk;
      }
      this.checkDigest(location, hash.digest());
    } finally {
      await this.release(location.file);
    }
  }

  async boundaryWindows(passIndex: number, name: string): Promise<BoundaryWindows | null> {
    this.requireBoundary(passIndex, name);
    const location = await this.locate(passIndex, name);
    const file = await this.acquire(location);
    let pinned: string | null;
    let feed: LeafFeed | null = null;
    try {
      // While a feed takes reads, an earlier pin of the file is not used: these reads are its verification's.
      pinned = this.feed?.accepting === true ? null : await this.pinnedIdentity(location, file);
      if (pinned === null) {
        const statAtMs = Date.now();
        pinned = await this.provisionalIdentity(location, file);
        // Fed only when a write after these reads would move the file's ctime (file-pins.ts): the
        // pin its verification records then stands for the bytes hashed here.
        if (pinned !== null && this.feed?.accepting === true && ctimeSettled(pinned, statAtMs)) feed = this.feed;
      }
    } catch (error) {
      await this.release(location.file);
      throw error;
    }
    if (pinned === null) {
      await this.release(location.file);
      return null;
    }
    let open = true;
    const release = async (): Promise<void> => {
      if (open) await this.release(location.file);
      open = false;
    };
    const tensorBytes = location.byteLength;
    return {
      read: async (offset, dest) => {
        await file.readTensorInto(location.key, offset, dest);
        // The bytes just read, hashed before the caller compares (or overwrites) them.
        if (feed === null) return;
        feed.supply(location.file, location.key, tensorBytes, offset, dest);
        feed.takeAnswers();
      },
      finish: async () => {
        try {
          if ((await file.identity()) !== pinned) throw this.changedWhileRead(location);
        } finally {
          await release();
        }
      },
      abort: release,
    };
  }

  async readBoundaryRange(passIndex: number, name: string, begin: number, end: number): Promise<Uint8Array> {
    const entry = this.requireBoundary(passIndex, name);
    if (!Number.isSafeInteger(begin) || !Number.isSafeInteger(end) || begin < 0 || end < begin || end > entry.byte_length) {
      throw new RangeError(`bytes [${begin}, ${end}) are outside boundary "${name}" of pass ${passIndex} (${entry.byte_length} bytes)`);
    }
    const location = await this.locate(passIndex, name);
    if (entry.chunks === undefined) return (await this.readVerified(location)).slice(begin, end);
    if (begin === end) return new Uint8Array(0);
    const { bytes: chunkBytes, sha256: digests } = entry.chunks;
    const { first, last } = chunksCovering(begin, end, chunkBytes);
    const from = first * chunkBytes;
    const file = await this.acquire(location);
    let data: Uint8Array;
    try {
      data = await file.readTensorRange(location.key, from, Math.min((last + 1) * chunkBytes, entry.byte_length));
    } finally {
      await this.release(location.file);
    }
    for (let i = 0; i * chunkBytes < data.byteLength; i++) {
      const actual = chunkDigestOf(data.subarray(i * chunkBytes, Math.min((i + 1) * chunkBytes, data.byteLength)), this.scheme);
      const chunk = first + i;
      if (actual !== digests[chunk]) {
        throw new BundleError(
          'E_DIGEST',
          this.display(location.file),
          manifestFieldOf(location, 'chunks', 'sha256', chunk),
          `tensor "${location.key}", chunk ${chunk}: ${MANIFEST_FILE_NAME} lists sha256 ${digests[chunk] ?? '(none)'}, its bytes hash to ${actual}`,
        );
      }
    }
    return data.slice(begin - from, end - from);
  }

  async readInput(name: string): Promise<TensorData> {
    const entry = this.input(name);
    if (entry === undefined) throw new BundleError('E_BOUNDARY_MISSING', this.manifestPath, 'inputs', `no input named "${name}"`);
    const data = await this.readVerified(await this.locate('input', name));
    return { dtype: entry.dtype, shape: entry.shape, strides: contiguousStrides(entry.shape), data };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (!this.verificationDone) this.feed?.abandon();
    const files = [...this.openFiles.values()];
    this.openFiles.clear();
    await Promise.all(files.map(async (slot) => (await slot.file).close()));
  }

  private requireBoundary(passIndex: number, name: string): BoundaryEntry {
    const entry = this.boundary(passIndex, name);
    if (entry === undefined) {
      const where = this.manifest.passes[passIndex] === undefined ? `pass ${passIndex} does not exist` : `pass ${passIndex} has no boundary "${name}"`;
      throw new BundleError('E_BOUNDARY_MISSING', this.manifestPath, formatFieldPath(['passes', passIndex]), where);
    }
    return entry;
  }

  async checkHeaders(): Promise<void> {
    await this.lazyHeaders?.checkAll();
  }

  private async locate(passIndex: number | 'input', name: string): Promise<TensorLocation> {
    const file = this.lazyHeaders?.fileOf(passIndex, name);
    if (file !== undefined) await this.lazyHeaders?.check(file);
    const location = this.locations.get(locationKey(passIndex, name));
    if (location === undefined) throw new Error(`internal: no location for ${String(passIndex)}/${name}`);
    return location;
  }

  private async readVerified(location: TensorLocation): Promise<Uint8Array> {
    const file = await this.acquire(location);
    try {
      const pinned = (await this.pinnedIdentity(location, file)) ?? (await this.provisionalIdentity(location, file));
      const data = await file.readTensor(location.key);
      if (pinned === null) this.checkDigest(location, tensorDigestOf(data, this.scheme));
      else if ((await file.identity()) !== pinned) throw this.changedWhileRead(location);
      return data;
    } finally {
      await this.release(location.file);
    }
  }

  /**
   * The identity under which this tensor's file was verified (file-pins.ts), when the file this
   * reader holds open still has it and the verification covered this manifest's digests of the
   * file and of the tensor; null: the tensor must be hashed as it is read. Checked at every read,
   * so a file changed between the open and the read is hashed and caught at the tensor changed.
   */
  private async pinnedIdentity(location: TensorLocation, file: SafetensorsFile): Promise<string | null> {
    const pin = pinOf(this.realPaths.get(location.file) as string);
    if (pin === undefined || pin.sha256 !== this.fileDigests.get(location.file) || pin.tensors.get(location.key) !== location.sha256) return null;
    return (await file.identity()) === pin.identity ? pin.identity : null;
  }

  /**
   * While a deferred verification of the bundle runs: the identity the file is read under, which
   * settleVerification then requires to be the one its verification pinned; null once it ended.
   */
  private async provisionalIdentity(location: TensorLocation, file: SafetensorsFile): Promise<string | null> {
    if (this.verification === null || this.verificationDone) return null;
    const identity = await file.identity();
    const seen = this.readUnder.get(location.file) ?? new Set<string>();
    seen.add(identity);
    this.readUnder.set(location.file, seen);
    return identity;
  }

  async settleVerification(): Promise<boolean> {
    if (this.verification === null) return true;
    this.feed?.end();
    let proven: boolean | void;
    try {
      proven = await this.verification;
    } finally {
      this.verificationDone = true;
    }
    if (proven === false) return false;
    for (const [file, identities] of this.readUnder) {
      const pin = pinOf(this.realPaths.get(file) as string);
      if (pin === undefined || pin.sha256 !== this.fileDigests.get(file)) return false;
      for (const identity of identities) if (identity !== pin.identity) return false;
    }
    return true;
  }

  private changedWhileRead(location: TensorLocation): BundleError {
    return new BundleError(
      'E_DIGEST',
      this.display(location.file),
      manifestFieldOf(location, 'sha256'),
      `tensor "${location.key}": the file was written to while the tensor was read (its size, modification or change time moved since it was verified); the bytes read are not evidence`,
    );
  }

  private checkDigest(location: TensorLocation, actual: string): void {
    if (actual !== location.sha256) {
      throw new BundleError(
        'E_DIGEST',
        this.display(location.file),
        manifestFieldOf(location, 'sha256'),
        `tensor "${location.key}": ${MANIFEST_FILE_NAME} lists sha256 ${location.sha256}, its bytes hash to ${actual}`,
      );
    }
  }

  /** Opens (or reuses) a tensor file and checks the tensor still sits where it was validated. */
  private async acquire(location: TensorLocation): Promise<SafetensorsFile> {
    if (this.closed)
      throw new Error(`${this.display(location.file)}: tensor "${location.key}" was asked for after its bundle (${this.manifestPath}) was closed`);
    let slot = this.openFiles.get(location.file);
    if (slot === undefined) {
      const real = this.realPaths.get(location.file) as string;
      slot = { file: SafetensorsFile.open(real, { displayName: this.display(location.file) }), users: 0 };
      this.openFiles.set(location.file, slot);
    } else {
      // Re-insert: Map order is the recency order used for eviction.
      this.openFiles.delete(location.file);
      this.openFiles.set(location.file, slot);
    }
    slot.users += 1;
    let file: SafetensorsFile;
    try {
      file = await slot.file;
    } catch (error) {
      slot.users -= 1;
      this.openFiles.delete(location.file);
      throw error;
    }
    const now = file.tensor(location.key);
    if (
      now === undefined ||
      now.begin !== location.begin ||
      now.byteLength !== location.byteLength ||
      now.dtype !== location.dtype ||
      now.shape.join(',') !== location.shape.join(',')
    ) {
      await this.release(location.file);
      throw new BundleError(
        'E_SAFETENSORS_HEADER',
        this.display(location.file),
        formatFieldPath(['header', location.key]),
        'changed since the bundle was opened',
      );
    }
    return file;
  }

  private async release(file: string): Promise<void> {
    const slot = this.openFiles.get(file);
    if (slot !== undefined) slot.users -= 1;
    if (this.openFiles.size <= OPEN_FILE_LIMIT) return;
    for (const [name, candidate] of this.openFiles) {
      if (this.openFiles.size <= OPEN_FILE_LIMIT) break;
      if (candidate.users > 0) continue;
      this.openFiles.delete(name);
      await (await candidate.file).close();
    }
  }
}

/**
 * The weights file named by provenance.model.weights_file (relative to the bundle folder),
 * or null when the bundle names none (an engine that embeds or generates its weights),
 * confined to the weights roots (weights-roots.ts: the bundle folder, the embedded weights
 * folder, $TRACE_INSPECTOR_WEIGHTS_ROOTS), checked to be a regular file, and verified against
 * weights_sha256. A path outside every root is refused before it is opened, so its digest is
 * never computed or printed.
 */
export async function resolveWeights(bundle: TraceBundle, env: Readonly<Record<string, string | undefined>> = process.env): Promise<string | null> {
  const { weights_file: weightsFile, weights_sha256: expected } = bundle.manifest.provenance.model;
  // No weights named: the engine embeds or generates its own and is opened with none.
  if (weightsFile === undefined || expected === undefined) return null;
  const field = 'provenance.model.weights_file';
  if (weightsFile.includes('\0')) throw new BundleError('E_PATH_INVALID', bundle.manifestPath, field, 'contains a NUL character');
  const path = resolve(bundle.dir, weightsFile);
  let real: string;
  try {
    real = await realpath(path);
  } catch (cause) {
    throw new BundleError('E_FILE_MISSING', path, field, `cannot read the weights named by ${bundle.manifestPath}: it does not exist`, { cause });
  }
  const roots = weightsRoots(bundle.dir, env);
  if (!(await insideSomeRoot(real, roots))) {
    throw new BundleError(
      'E_PATH_ESCAPE',
      bundle.manifestPath,
      field,
      `"${weightsFile}" resolves to ${real}, outside the bundle folder and every weights root (${roots.slice(1).join(', ')}); ` +
        `put the weights there, list their folder in $${WEIGHTS_ROOTS_ENV}, or name them with --weights (capture and --gate)`,
    );
  }
  let digest: string;
  try {
    digest = (await sha256File(real)).sha256;
  } catch (cause) {
    const reason = cause instanceof GuardedReadError ? cause.reason : `cannot be read (${(cause as Error).message})`;
    throw new BundleError('E_FILE_NOT_REGULAR', path, field, `the weights named by ${bundle.manifestPath} ${reason}`, { cause });
  }
  if (digest !== expected) {
    throw new BundleError(
      'E_DIGEST',
      path,
      'provenance.model.weights_sha256',
      `${bundle.manifestPath} lists sha256 ${expected}, the weights file hashes to ${digest} (different weights than the bundle was made from)`,
    );
  }
  return path;
}

/**
 * A weights file the user names directly (capture or --gate --weights): the user's own choice,
 * so not confined to the weights roots, but still read only as a regular file (guarded-read),
 * and, for the gate, it must be the weights the reference was made from: its sha256 is
 * compared with the reference's provenance.model.weights_sha256.
 */
export async function checkGivenWeights(bundle: TraceBundle, path: string, flag: string): Promise<string> {
  let digest: string;
  try {
    digest = (await sha256File(path)).sha256;
  } catch (cause) {
    const reason = cause instanceof GuardedReadError ? cause.reason : `cannot be read (${(cause as Error).message})`;
    throw new BundleError('E_FILE_NOT_REGULAR', path, flag, `the weights named by ${flag} ${reason}`, { cause });
  }
  const expected = bundle.manifest.provenance.model.weights_sha256;
  if (expected === undefined) {
    throw new BundleError(
      'E_PROVENANCE',
      bundle.manifestPath,
      'provenance.model.weights_file',
      `names no weights (its engine embeds or generates them), so ${flag} ${path} cannot be checked against the weights the reference was made from; leave ${flag} out`,
    );
  }
  if (digest !== expected) {
    throw new BundleError(
      'E_DIGEST',
      bundle.manifestPath,
      'provenance.model.weights_sha256',
      `lists sha256 ${expected}, but ${flag} ${path} hashes to ${digest} (different weights than the reference was made from)`,
    );
  }
  return path;
}
