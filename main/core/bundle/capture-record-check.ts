// The checks every captured record passes before its frame is laid out, wherever the frame is
// built: in the capture writer (NativeBundleWriter.openRecord, appendRecord) or on the engine's
// thread before the record goes into the capture pool (main/engine-host/capture-pool.ts).
// Hand-written checks, no schema: they run for every record.
import { MAX_FRAME_RANK } from './capture-frame.ts';
import { DTYPE_SIZE, type DType } from './dtype.ts';
import { BundleError } from './errors.ts';
import { METADATA_KEY } from './safetensors-header.ts';

/** Names and stages are stored as UTF-8, which cannot hold an unpaired surrogate. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const field = (name: string, part: string): string => `record ${JSON.stringify(name)}.${part}`;

/** The pass a record belongs to, as far as the checks need it. */
export interface CheckedPass {
  readonly index: number;
  /** Boundaries already recorded in the pass. */
  readonly names: ReadonlySet<string>;
}

/**
 * Checks one record of `pass` and returns its row-major byte length; throws a BundleError that
 * blames `file` (the pass file the record is for) and the record's field. `data`, when given,
 * must hold exactly that many bytes.
 */
export function checkCaptureRecord(
  file: string,
  pass: CheckedPass,
  name: string,
  stage: string,
  dtype: DType,
  shape: readonly number[],
  strides: readonly number[],
  data: Uint8Array | null,
): number {
  const fail = (code: 'E_RECORD' | 'E_SHAPE' | 'E_BYTE_LENGTH' | 'E_DUPLICATE_BOUNDARY', where: string, message: string): never => {
    throw new BundleError(code, file, where, message);
  };
  if (typeof name !== 'string' || name.length === 0) fail('E_RECORD', 'record.name', 'expected a non-empty string');
  if (LONE_SURROGATE.test(name)) fail('E_RECORD', 'record.name', 'is not well-formed (a lone UTF-16 surrogate)');
  if (name === METADATA_KEY) fail('E_RECORD', 'record.name', `"${METADATA_KEY}" is reserved in safetensors headers and cannot name a boundary`);
  if (typeof stage !== 'string' || stage.length === 0 || LONE_SURROGATE.test(stage))
    fail('E_RECORD', field(name, 'stage'), 'expected a non-empty, well-formed string');
  const size = Object.hasOwn(DTYPE_SIZE, dtype) ? DTYPE_SIZE[dtype] : 0;
  if (size === 0) fail('E_RECORD', field(name, 'dtype'), `unknown dtype ${JSON.stringify(dtype)}`);
  if (!Array.isArray(shape) || shape.length > MAX_FRAME_RANK)
    fail('E_RECORD', field(name, 'shape'), `expected an array of at most ${MAX_FRAME_RANK} non-negative integers`);
  const rank = shape.length;
  let count = 1;
  for (let axis = 0; axis < rank; axis++) {
    const extent = shape[axis] as number;
    if (!Number.isSafeInteger(extent) || extent < 0) fail('E_RECORD', field(name, 'shape'), 'expected non-negative integers');
    count *= extent;
  }
  let stridesOk = Array.isArray(strides) && strides.length === rank;
  for (let axis = 0; stridesOk && axis < rank; axis++) stridesOk = Number.isSafeInteger(strides[axis]);
  if (!stridesOk) fail('E_SHAPE', field(name, 'strides'), `expected ${rank} integers (one per axis of shape [${shape.join(', ')}])`);
  const byteLength = count * size;
  if (!Number.isSafeInteger(byteLength)) fail('E_RECORD', field(name, 'shape'), `[${shape.join(', ')}] holds more bytes than this writer can address`);
  if (data !== null) {
    if (!(data instanceof Uint8Array)) fail('E_RECORD', field(name, 'data'), 'expected a Uint8Array');
    if (data.byteLength !== byteLength) {
      fail('E_BYTE_LENGTH', field(name, 'data'), `${data.byteLength} bytes, but ${dtype} of shape [${shape.join(', ')}] needs ${byteLength} (row-major)`);
    }
  }
  if (pass.names.has(name)) fail('E_DUPLICATE_BOUNDARY', field(name, 'name'), `boundary "${name}" was already recorded in pass ${pass.index}`);
  return byteLength;
}

/** A FrameFieldError (name or stage too long for a frame) as the BundleError the checks throw. */
export function frameFieldError(file: string, name: string, which: 'name' | 'stage', message: string): BundleError {
  return new BundleError('E_RECORD', file, which === 'name' ? 'record.name' : field(name, 'stage'), message);
}
