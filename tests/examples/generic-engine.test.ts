// A model that assumes nothing of LFM, end to end: its engine embeds its one weight (no weights
// file: the bundle names none and the engine opens with none), its output is 48 kHz audio the
// manifest declares, and one boundary is emitted when the engine decides (a peak reported only
// on loud passes). The kit writes the reference and its float64 oracle with numpy alone; the
// engine is C on the helper header. Each feature is also fed a deliberate error that must be
// caught: weights named for a bundle that has none, an audio declaration that does not fit,
// weights half named, a nullable contract field left out, a catalogue emit kind that does not
// exist, and --teacher-force where there is nothing to force.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav } from '../../main/core/audio/wav.ts';
import { keyFiles } from '../gate/gate-fixtures.ts';
import { REPO_ROOT, tempDirTracker } from '../helpers/paths.ts';
import { runCliProcess } from '../helpers/run-cli.ts';

const { tempDir, removeTempDirs } = tempDirTracker('generic');
afterAll(removeTempDirs);

const FRAME = 480;

const MODEL = String.raw`
import sys
import numpy as np
from trace_inspector import BundleWriter, bit_exact, faithful_from_k

out = sys.argv[1]
FRAME = ${FRAME}
t = np.arange(3 * FRAME).reshape(3, FRAME) / 48000.0
amplitude = np.array([[0.4], [0.8], [1.0]])
x = (amplitude * np.sin(2 * np.pi * 440.0 * t)).astype(np.float32)


def run(folder, dtype, reference=None):
    kind = "oracle-f64" if reference else "reference"
    # No weights_file: the engine embeds its gain (0.5).
    with BundleWriter(folder, case_id="gain", kind=kind, reference=reference,
                      model=None if reference else {"name": "gain-synth"}) as bundle:
        bundle.input("x", x)
        for p in range(3):
            with bundle.begin_pass():
                y = np.asarray(x[p], dtype=dtype) * dtype(0.5)
                bundle.boundary("synth.out", y, contract=None if reference else faithful_from_k(1, y))
                peak = np.array([np.max(np.abs(y))], dtype=dtype)
                if peak[0] > 0.3:  # the model reports its peak on loud passes only
                    bundle.boundary("synth.peak", peak, contract=None if reference else bit_exact("max of exact products"))
        if not reference:
            bundle.audio("synth.out", 48000)


run(out + "/reference", np.float32)
run(out + "/oracle-f64", np.float64, reference=out + "/reference")
`;

const ENGINE = String.raw`
#include "ti_helper.h"

#include <math.h>
#include <stdio.h>

#ifndef PEAK_EMIT
#define PEAK_EMIT "engine_decides"
#endif

enum { IN_X };
enum { B_OUT, B_PEAK };
enum { OPT_NEVER_PEAK, OPT_LOUD };
static const tih_input INPUTS[] = {{"x", TI_F32, TIH_SHAPE(TIH_SYM("P"), TIH_DIM(${FRAME})), true, "one frame per pass"}};
static const tih_boundary BOUNDARIES[] = {
    {"synth.out", NULL, TI_F32, TIH_SHAPE(TIH_DIM(${FRAME})), NULL, false, "0.5 x, 48 kHz"},
    {"synth.peak", NULL, TI_F32, TIH_SHAPE(TIH_DIM(1)), PEAK_EMIT, false, "max |out|, on loud passes"},
};
static const tih_option OPTIONS[] = {
    {"perturb.never_peak", TIH_BOOL, "0", "never report the peak"},
    {"perturb.loud", TIH_BOOL, "0", "gain 0.6 instead of 0.5"},
};

static ti_status synth_open(tih_session *s, const char *config, const char *weights) {
    (void)config;
    /* The gain is embedded: the host must open this engine with no weights. */
    if (weights != NULL) return tih_fail(s, TI_ERR_INVALID_ARGUMENT, "this engine embeds its gain; expected no weights, got %s", weights);
    return TI_OK;
}

static ti_status synth_pass(tih_session *s) {
    const tih_tensor *x = tih_input_tensor(s, IN_X);
    uint32_t p = tih_pass_index(s);
    if (p >= x->shape[0]) return tih_fail(s, TI_ERR_STATE, "pass %u: x has %lld frames", p, (long long)x->shape[0]);
    const float *xp = (const float *)x->data + (size_t)${FRAME} * p;
    const float gain = tih_option_bool(s, OPT_LOUD) ? 0.6f : 0.5f;
    float y[${FRAME}], peak = 0.0f;
    for (int i = 0; i < ${FRAME}; i++) {
        y[i] = xp[i] * gain;
        if (fabsf(y[i]) > peak) peak = fabsf(y[i]);
    }
    const int64_t frame = ${FRAME}, one = 1;
    ti_status status = tih_emit(s, B_OUT, y, 1, &frame);
    if (status == TI_OK && peak > 0.3f && !tih_option_bool(s, OPT_NEVER_PEAK)) status = tih_emit(s, B_PEAK, &peak, 1, &one);
    return status;
}

const tih_engine TIH_ENGINE = {
    .name = "gain-synth-c", .version = "1", .build_id = "test",
    .inputs = INPUTS, .input_count = 1, .boundaries = BOUNDARIES, .boundary_count = 2,
    .options = OPTIONS, .option_count = 2, .state_size = 1, .open = synth_open, .pass = synth_pass,
};
`;

let dir = '';
let library = '';
let badEmitLibrary = '';
let key = '';
let publicKey = '';

function build(out: string, defines: readonly string[]): void {
  execFileSync('gcc', [
    '-std=c11',
    '-Wall',
    '-Wextra',
    '-Werror',
    '-O2',
    '-fPIC',
    '-shared',
    ...defines,
    '-I',
    join(REPO_ROOT, 'engine', 'include'),
    '-I',
    join(REPO_ROOT, 'engine', 'helpers'),
    '-o',
    out,
    join(dir, 'engine.c'),
    join(REPO_ROOT, 'engine', 'helpers', 'ti_helper.c'),
    '-lm',
  ]);
}

beforeAll(() => {
  dir = tempDir('synth');
  writeFileSync(join(dir, 'model.py'), MODEL);
  const py = spawnSync('/usr/bin/python3', [join(dir, 'model.py'), dir], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, PYTHONPATH: join(REPO_ROOT, 'python') },
  });
  if (py.status !== 0) throw new Error(`the model script failed:\n${py.stdout}${py.stderr}`);
  writeFileSync(join(dir, 'engine.c'), ENGINE);
  library = join(dir, 'libsynth.so');
  build(library, []);
  badEmitLibrary = join(dir, 'libsynth-bad-emit.so');
  build(badEmitLibrary, ['-DPEAK_EMIT="sometimes"']);
  ({ privateKeyPath: key, publicKeyPath: publicKey } = keyFiles(dir));
}, 180_000);

function gate(work: string, extra: readonly string[] = [], engine = library): ReturnType<typeof runCliProcess> {
  return runCliProcess([
    '--gate',
    '--engine',
    engine,
    '--bundle',
    join(dir, 'reference'),
    '--oracle',
    join(dir, 'oracle-f64'),
    '--work',
    join(dir, work),
    '--key',
    key,
    ...extra,
  ]);
}

/** A copy of the reference whose manifest.json `edit` changed (the manifest is covered by no digest of its own). */
function editedReference(name: string, edit: (manifest: Record<string, unknown>) => void): string {
  const copy = join(dir, name);
  cpSync(join(dir, 'reference'), copy, { recursive: true });
  const path = join(copy, 'manifest.json');
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  edit(manifest);
  writeFileSync(path, JSON.stringify(manifest));
  return copy;
}

describe('a model with no weights file, 48 kHz audio and a boundary the engine emits when it decides', () => {
  it('the kit writes no weights and declares the audio; the gate is green and says "no weights"', () => {
    const manifest = JSON.parse(readFileSync(join(dir, 'reference', 'manifest.json'), 'utf8')) as {
      provenance: { model: Record<string, unknown> };
      audio: unknown;
    };
    expect(manifest.provenance.model).toEqual({ name: 'gain-synth', checkpoint_revision: 'gain-synth' });
    expect(manifest.audio).toEqual({ 'synth.out': { sample_rate: 48000 } });
    const run = gate('green');
    expect(run.stdout).toContain('weights    no weights');
    // 3 synth.out rows and the 2 loud passes' synth.peak.
    expect(run.stdout).toContain('all 5 boundary rows PASS');
    // The gate's audio section at the declared rate: 1440 samples are 0.030 s at 48 kHz.
    expect(run.stdout).toContain('audio    gain synth.out: 1440 samples (0.030 s)');
    expect(run.stdout.trimEnd().split('\n').slice(-2)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    expect(run.status).toBe(0);
  });

  it('the receipt pins no weights subject, says weights null, and verifies', () => {
    const receipt = join(dir, 'green', 'receipt.dsse.json');
    const envelope = JSON.parse(readFileSync(receipt, 'utf8')) as { payload: string };
    const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as {
      subject: { name: string }[];
      predicate: { cases: { id: string; weights: string | null }[] };
    };
    expect(statement.predicate.cases.map((item) => [item.id, item.weights])).toEqual([['gain', null]]);
    expect(statement.subject.map((subject) => subject.name).sort()).toEqual(['gain/oracle-f64/manifest.json', 'gain/reference/manifest.json', 'libsynth.so']);
    const verified = runCliProcess(['verify', receipt, '--pubkey', publicKey]);
    expect(verified.stdout + verified.stderr).toMatch(/verified/i);
    expect(verified.status).toBe(0);
  });

  it('refuses --weights for a reference that names none (exit 2, nothing run)', () => {
    const weights = join(dir, 'stray.bin');
    writeFileSync(weights, 'not weights');
    const run = gate('stray-weights', ['--weights', weights]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('provenance.model.weights_file: names no weights');
    expect(run.stderr).toContain(`--weights ${weights} cannot be checked`);
    expect(existsSync(join(dir, 'stray-weights'))).toBe(false);
  });

  it('a boundary declared engine_decides that the engine does not emit is neither GAP nor FAIL', () => {
    const run = gate('never-peak', ['--option', 'perturb.never_peak=1']);
    expect(run.stdout).toContain('all 3 boundary rows PASS');
    expect(run.stdout).not.toContain('synth.peak');
    expect(run.status).toBe(0);
  });

  it('a wrong value is still caught at its boundary and pass', () => {
    const run = gate('loud', ['--option', 'perturb.loud=1']);
    expect(run.stdout).toMatch(/first divergence: case gain, pass 0 \/ synth\.out/);
    expect(run.stdout).toContain('FIDELITY: FAIL');
    expect(run.status).toBe(1);
  });

  it('a catalogue emit kind the host does not know is refused when the engine loads, naming the field', () => {
    const run = gate('bad-emit', [], badEmitLibrary);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/boundaries\[1\]\.emit/);
    expect(run.stderr).toContain('engine_decides');
  });

  it('--teacher-force with nothing to force is refused before anything runs', () => {
    const run = gate('forced', ['--teacher-force']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("case gain: --teacher-force: nothing to force: the engine's catalogue declares no token-like boundary");
    expect(existsSync(join(dir, 'forced', 'gain', 'native'))).toBe(false);
  });
});

describe('export-wav at the declared rate, of declared audio only', () => {
  it('writes synth.out as a 48 kHz WAV without --boundary (the one declared audio boundary)', () => {
    const out = join(dir, 'synth.wav');
    const run = runCliProcess(['export-wav', '--bundle', join(dir, 'reference'), '--out', out]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('1440 samples, 0.030 s at 48000 Hz');
    const wav = decodeWav(readFileSync(out));
    expect(wav.sampleRate).toBe(48000);
    expect(wav.samples.length).toBe(1440);
  });

  it('refuses a boundary that is not declared audio, naming the declared ones', () => {
    const run = runCliProcess(['export-wav', '--bundle', join(dir, 'reference'), '--boundary', 'synth.peak', '--out', join(dir, 'peak.wav')]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('audio: "synth.peak" is not declared audio (declared audio boundaries: "synth.out")');
    expect(existsSync(join(dir, 'peak.wav'))).toBe(false);
  });
});

describe('the manifest rules these features add, each fed a deliberate error', () => {
  const check = (bundle: string): ReturnType<typeof runCliProcess> => runCliProcess(['check', bundle]);

  it('an audio declaration of a boundary no pass records, or with no usable rate', () => {
    const missing = check(editedReference('audio-missing', (m) => void (m['audio'] = { 'synth.nothing': { sample_rate: 48000 } })));
    expect(missing.status).toBe(2);
    expect(missing.stdout + missing.stderr).toContain('audio["synth.nothing"]');
    expect(missing.stdout + missing.stderr).toContain('no pass records a boundary "synth.nothing"');
    const zero = check(editedReference('audio-zero', (m) => void (m['audio'] = { 'synth.out': { sample_rate: 0 } })));
    expect(zero.status).toBe(2);
    expect(zero.stdout + zero.stderr).toContain('expected a positive sample rate in Hz');
  });

  it('weights half named: a digest without a file', () => {
    const run = check(
      editedReference('half-weights', (m) => {
        (m['provenance'] as { model: Record<string, unknown> }).model['weights_sha256'] = '0'.repeat(64);
      }),
    );
    expect(run.status).toBe(2);
    expect(run.stdout + run.stderr).toContain('provenance.model.weights_file: missing while weights_sha256 is given');
  });

  it('a faithful contract without max_ulp: missing (a number or null)', () => {
    const run = check(
      editedReference('no-max-ulp', (m) => {
        const passes = m['passes'] as { boundaries: { contract: Record<string, unknown> }[] }[];
        delete passes[0]?.boundaries[0]?.contract['max_ulp'];
      }),
    );
    expect(run.status).toBe(2);
    expect(run.stdout + run.stderr).toContain('passes[0].boundaries[0].contract.max_ulp: missing (a number or null)');
  });
});
