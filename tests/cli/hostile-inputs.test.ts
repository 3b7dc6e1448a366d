// The rule across every command: whatever the input, the CLI answers with a named error and its
// documented exit code — never "internal error", never a stack trace, never a hang. Each row is
// one command with one hostile input (a path that is a file or below one, a library that
// crashes or hangs while loading, an engine that breaks the record contract or forks a child
// that lingers, a manifest with 200,000 invalid boundaries, unreadable receipts, ...), run as
// a user runs it (bin/trace-inspector.js), with a time bound far below any hang.
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeToyCase } from '../gate/gate-fixtures.ts';
import { TESTLIB_DIR, referenceBundle, tempDirTracker } from '../helpers/paths.ts';
import { runCliBounded } from '../helpers/run-cli.ts';

const { tempDir, removeTempDirs } = tempDirTracker('hostile');
afterAll(() => removeTempDirs());

/** What no answer of the CLI may contain. */
const INTERNAL_ERROR = /internal error/i;
const STACK_FRAME = /^\s{2,}at .+[(:]\d+/m;

const work = tempDir('inputs');
const aFile = join(work, 'a-file.txt');
writeFileSync(aFile, 'not a folder\n');
const toy = writeToyCase(join(work, 'toy'), { passes: 3 }).referenceDir;
const lib = (name: string): string => join(TESTLIB_DIR, `lib${name}.so`);

/** A copy of a committed reference whose manifest lists 200,000 invalid boundaries in pass 0. */
function manyBadBoundaries(): string {
  const dir = join(work, 'many-bad');
  cpSync(referenceBundle('greedy'), dir, { recursive: true });
  const manifestPath = join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { passes: { boundaries: Record<string, unknown>[] }[] };
  const first = manifest.passes[0]?.boundaries[0] ?? {};
  const bad = JSON.stringify({ ...first, dtype: 'X99' }).slice(1, -1);
  const pass0 = `{"index":0,"kind":"prefill","mode":"text","file":"pass-000.safetensors","boundaries":[${Array.from({ length: 200_000 }, () => `{${bad}}`).join(',')}]}`;
  const text = JSON.stringify({ ...manifest, passes: ['PASS0'] }).replace('"PASS0"', pass0);
  writeFileSync(manifestPath, text);
  return dir;
}

const out = (label: string): string => join(tempDir(label), 'out');

interface Row {
  what: string;
  args: () => readonly string[];
  exit: number;
  /** What the answer must name (on stderr or stdout). */
  names: RegExp;
  timeoutMs?: number;
  env?: Readonly<Record<string, string>>;
}

const ROWS: Row[] = [
  // capture
  {
    what: 'capture --out an existing file',
    args: () => ['capture', '--engine', lib('toy_engine'), '--bundle', toy, '--out', aFile],
    exit: 2,
    names: /is a file, not a folder/,
  },
  {
    what: 'capture --out below a file',
    args: () => ['capture', '--engine', lib('toy_engine'), '--bundle', toy, '--out', join(aFile, 'below')],
    exit: 2,
    names: /lies below a file/,
  },
  {
    what: 'capture --bundle that is a file',
    args: () => ['capture', '--engine', lib('toy_engine'), '--bundle', aFile, '--out', out('c3')],
    exit: 2,
    names: /a-file\.txt/,
  },
  {
    what: 'capture --bundle with 200,000 invalid boundaries',
    args: () => ['capture', '--engine', lib('toy_engine'), '--bundle', manyBadBoundaries(), '--out', out('c4')],
    exit: 2,
    names: /and more problems: checking stopped at passes\[0\]\.boundaries\[100\]/,
  },
  {
    what: 'capture --engine whose constructor crashes',
    args: () => ['capture', '--engine', lib('ctor_segv_engine'), '--bundle', toy, '--out', out('c5')],
    exit: 2,
    names: /libctor_segv_engine\.so: loading the library killed the engine host/,
  },
  {
    what: 'capture --engine whose constructor hangs',
    args: () => ['capture', '--engine', lib('ctor_hang_engine'), '--bundle', toy, '--out', out('c6'), '--timeout', '1'],
    exit: 2,
    names: /libctor_hang_engine\.so: loading the library did not finish within 10000 ms/,
  },
  {
    what: 'capture --engine whose record shape overflows 64 bits',
    args: () => ['capture', '--engine', lib('shape_overflow_engine'), '--bundle', toy, '--out', out('c7')],
    exit: 1,
    names: /engine contract violated: shape \[8589934592, 2147483648\]/,
  },
  {
    what: 'capture --engine that ignores the stop request',
    args: () => ['capture', '--engine', lib('ignore_stop_engine'), '--bundle', toy, '--out', out('c8')],
    exit: 1,
    names: /run engine_error in pass 1 .*ignored the request to stop/,
  },
  {
    what: 'capture --engine that emits a record from its own thread',
    args: () => ['capture', '--engine', lib('foreign_thread_engine'), '--bundle', toy, '--out', out('c10'), '--timeout', '30'],
    exit: 1,
    names: /run engine_error in pass 1 .*record from a foreign thread: toy\.embed/,
    timeoutMs: 25_000,
  },
  {
    what: 'capture --engine that forks a child holding stdout for 180 s',
    args: () => ['capture', '--engine', lib('fork_linger_engine'), '--bundle', toy, '--out', out('c9')],
    exit: 0,
    names: /native bundle: /,
    // The child sleeps 180 s: a command that waited for it would still be open at 60 s, while a
    // loaded machine running every row at once has taken over 20 s for this capture.
    timeoutMs: 60_000,
  },
  {
    what: 'capture of a folder holding an interrupted capture',
    args: () => ['capture', '--engine', lib('toy_engine'), '--bundle', toy, '--out', interruptedCapture()],
    exit: 2,
    names: /trace-inspector recover /,
  },
  // gate
  {
    what: 'gate --bundle that is a file',
    args: () => ['--gate', '--engine', lib('toy_engine'), '--bundle', aFile, '--work', out('g1'), '--key', keyFile()],
    exit: 2,
    names: /a-file\.txt/,
  },
  {
    what: 'gate --work that is a file',
    args: () => ['--gate', '--engine', lib('toy_engine'), '--bundle', toy, '--work', aFile, '--key', keyFile()],
    exit: 2,
    names: /--work .*a-file\.txt is a file/,
  },
  {
    what: 'gate --engine whose constructor crashes',
    args: () => ['--gate', '--engine', lib('ctor_segv_engine'), '--bundle', toy, '--work', out('g3'), '--key', keyFile()],
    exit: 2,
    names: /libctor_segv_engine\.so: loading the library killed the engine host/,
  },
  // An engine that keeps emitting after the host asked it to stop: the run ends engine_error and
  // the gate fails (never FIDELITY: OK on the records it kept).
  {
    what: 'gate --engine that ignores the stop request',
    args: () => ['--gate', '--engine', lib('ignore_stop_engine'), '--bundle', toy, '--work', out('g5'), '--key', keyFile()],
    exit: 1,
    names: /pass 1 \[2\/3\] engine_error: .*ignored the request to stop[\s\S]*FIDELITY: FAIL/,
  },
  {
    what: 'gate --json that exists',
    args: () => ['--gate', '--engine', lib('toy_engine'), '--bundle', toy, '--work', out('g4'), '--key', keyFile(), '--json', aFile],
    exit: 2,
    names: /--json .*already exists/,
  },
  // verify
  { what: 'verify a missing receipt', args: () => ['verify', join(work, 'no-such-receipt.json')], exit: 2, names: /no-such-receipt\.json/ },
  { what: 'verify a receipt that is not JSON', args: () => ['verify', aFile], exit: 2, names: /a-file\.txt/ },
  { what: 'verify a folder', args: () => ['verify', work], exit: 2, names: new RegExp(work.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) },
  // keygen
  { what: 'keygen --out below a file', args: () => ['keygen', '--out', join(aFile, 'keys')], exit: 2, names: /a-file\.txt/ },
  // recover
  { what: 'recover a file', args: () => ['recover', aFile], exit: 2, names: /not a folder/ },
  { what: 'recover a folder without a capture', args: () => ['recover', tempDir('empty')], exit: 2, names: /holds no capture/ },
  { what: 'recover without a folder', args: () => ['recover'], exit: 2, names: /expected exactly one folder/ },
  // export-wav
  { what: 'export-wav of a missing bundle', args: () => ['export-wav', '--bundle', join(work, 'nope'), '--out', join(work, 'x.wav')], exit: 2, names: /nope/ },
  {
    what: 'export-wav --out below a file',
    args: () => ['export-wav', '--bundle', referenceBundle('speech'), '--out', join(aFile, 'x.wav')],
    exit: 2,
    names: /a-file\.txt/,
  },
  // serve, help, unknown
  { what: 'serve --port that is not a number', args: () => ['serve', '--port', 'eighty'], exit: 2, names: /--port/ },
  { what: 'an unknown command', args: () => ['frobnicate'], exit: 2, names: /unknown command "frobnicate"/ },
];

let key: string | null = null;
/** A signing key for the gate rows (the gate needs one before it looks at anything else). */
function keyFile(): string {
  if (key !== null) return key;
  const { privateKey } = generateKeyPairSync('ed25519');
  key = join(tempDir('key'), 'gate.key');
  writeFileSync(key, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return key;
}

/** A folder as a killed capture leaves it: the journal header, no manifest. */
function interruptedCapture(): string {
  const dir = out('interrupted');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'capture.journal.jsonl'), '{"t":"header"');
  return dir;
}

describe.concurrent('every command answers hostile input with a named error and its documented exit code', () => {
  it.each(ROWS)(
    '$what → exit $exit',
    async (row) => {
      const answer = await runCliBounded(row.args(), { timeoutMs: row.timeoutMs ?? 40_000, env: row.env ?? {} });
      const text = `${answer.stderr}\n${answer.stdout}`;
      expect(answer.timedOut, `still open after ${answer.ms} ms (a hang):\n${text}`).toBe(false);
      expect(answer.signal, text).toBeNull();
      expect(text).not.toMatch(INTERNAL_ERROR);
      expect(text).not.toMatch(STACK_FRAME);
      expect(answer.status, text).toBe(row.exit);
      expect(text).toMatch(row.names);
    },
    90_000,
  );
});
