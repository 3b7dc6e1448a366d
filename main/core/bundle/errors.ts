// BundleError: every rejection of bundle input names the file, the field and what was expected,
// so a user can fix the evidence (or regenerate it) without reading the source.

/** Stable error codes: tests, the gate and the UI switch on these, never on message text. */
export const BUNDLE_ERROR_CODES = [
  'E_MANIFEST_JSON', // manifest.json is not valid JSON (or cannot be read)
  'E_SCHEMA_NAME', // "schema" is not "trace-inspector.bundle"
  'E_SCHEMA_VERSION', // "schema_version" is not one this reader speaks
  'E_MANIFEST_SCHEMA', // the manifest does not match the zod schema
  'E_PROVENANCE', // provenance fields missing or invalid (all of them named)
  'E_PASS_ORDER', // pass indices / kinds out of order
  'E_DUPLICATE_BOUNDARY', // a boundary name repeats within a pass
  'E_DUPLICATE_NAME', // an input name, tensor key, file path or gap id repeats
  'E_BYTE_LENGTH', // byte_length disagrees with dtype x shape, or with the file header
  'E_SHAPE', // strides rank, valid region or strided addressing disagree with the shape
  'E_LAYOUT', // layout disagrees with strides
  'E_CONTRACT', // a reference bundle boundary lacks its contract
  'E_RUN', // run outcome missing or inconsistent
  'E_PATH_ABSOLUTE', // a manifest path is absolute
  'E_PATH_ESCAPE', // a manifest path leaves the bundle folder (.., symlink)
  'E_PATH_INVALID', // a manifest path is empty or uses characters bundles do not allow
  'E_FILE_UNLISTED', // a file used by the manifest is missing from "files"
  'E_FILE_MISSING', // a listed file does not exist
  'E_FILE_NOT_REGULAR', // a listed path is a folder, device, ...
  'E_FILE_SIZE', // a file's size differs from "bytes"
  'E_DIGEST', // a sha256 does not match
  'E_PADDING', // a reference or oracle tensor breaks its own declared padding policy past `valid`
  'E_SAFETENSORS_HEADER', // a safetensors header is malformed
  'E_TENSOR_MISSING', // a key named by the manifest is absent from the file header
  'E_TENSOR_UNLISTED', // a pass file holds a tensor the manifest does not list
  'E_DTYPE_MISMATCH', // manifest dtype differs from the file header
  'E_SHAPE_MISMATCH', // manifest shape differs from the file header
  'E_BOUNDARY_MISSING', // a (pass, boundary) or input asked for does not exist
  'E_TARGET_NOT_EMPTY', // a writer target already exists / is not empty
  'E_WRITER_STATE', // a writer call out of order (record outside a pass, ...)
  'E_RECORD', // a record handed to the writer is malformed
  'E_JOURNAL', // a capture journal cannot be recovered
  'E_INDEX_FORMAT', // a fixtures index line is malformed
] as const;

export type BundleErrorCode = (typeof BUNDLE_ERROR_CODES)[number];

/** One problem: a JSON path (or header field) and what is wrong there. */
export interface BundleIssue {
  readonly code: BundleErrorCode;
  readonly field: string;
  readonly message: string;
}

export class BundleError extends Error {
  override readonly name = 'BundleError';
  readonly code: BundleErrorCode;
  /** The file at fault, as the caller named it (a bundle-relative or user-given path). */
  readonly file: string;
  /** The first field at fault; `issues` holds every one when several were found at once. */
  readonly field: string;
  readonly issues: readonly BundleIssue[];

  constructor(code: BundleErrorCode, file: string, field: string, detail: string, options?: { cause?: unknown }) {
    super(`${file}: ${field}: ${detail}`, options);
    this.code = code;
    this.file = file;
    this.field = field;
    this.issues = [{ code, field, message: detail }];
  }

  /**
   * One error for several problems in the same file: the code is `code` when given, else the
   * first issue's (callers order issues by importance); the message lists every issue with its
   * field, one per line.
   */
  static fromIssues(file: string, issues: readonly BundleIssue[], code?: BundleErrorCode): BundleError {
    const first = issues[0];
    if (first === undefined) throw new Error('BundleError.fromIssues needs at least one issue');
    if (issues.length === 1) return new BundleError(code ?? first.code, file, first.field, first.message);
    return new MultiIssueBundleError(code ?? first.code, file, issues);
  }
}

/** Problems a message lists at most. */
const LISTED_ISSUES = 101;

/** A BundleError listing several issues (kept a subclass so the base constructor stays simple). */
class MultiIssueBundleError extends BundleError {
  override readonly issues: readonly BundleIssue[];

  constructor(code: BundleErrorCode, file: string, issues: readonly BundleIssue[]) {
    const first = issues[0] as BundleIssue;
    super(code, file, first.field, first.message);
    this.issues = issues;
    // A message stays readable: the first LISTED_ISSUES problems, then a count (issues keeps all).
    const lines = issues.slice(0, LISTED_ISSUES).map((issue) => `  ${issue.field}: ${issue.message}`);
    if (issues.length > LISTED_ISSUES) lines.push(`  ... and ${issues.length - LISTED_ISSUES} more`);
    this.message = `${file}: ${issues.length} problems:\n${lines.join('\n')}`;
  }
}

export function isBundleError(value: unknown): value is BundleError {
  return value instanceof BundleError;
}

/** `a.b[3]["odd.key"]` from a path of keys: the notation every message uses. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out === '' ? '(root)' : out;
}
