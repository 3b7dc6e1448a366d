// "Bring your own model" without the worked example: a model the test defines on the spot (a
// tiny RNN cell, one step per pass, its hidden state carried across passes) gets its reference and
// float64 oracle from the Python kit, an engine written here in C with the helper header
// (engine/helpers/ti_helper.h) reading the same weights, and the gate is green; with a
// deliberate bug (the bias forgotten) it is red at the first boundary that bug touches.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFiles } from '../gate/gate-fixtures.ts';
import { REPO_ROOT, tempDirTracker } from '../helpers/paths.ts';
import { runCliProcess } from '../helpers/run-cli.ts';

const { tempDir, removeTempDirs } = tempDirTracker('spot');
afterAll(removeTempDirs);

const MODEL = String.raw`
import sys
import torch
from trace_inspector import BundleWriter, faithful_from_k, float64_copy

out = sys.argv[1]
torch.manual_seed(7)


class Cell(torch.nn.Module):
    """h' = tanh(W x + b + U h), y = V h'."""

    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(3, 4)
        self.rec = torch.nn.Linear(4, 4, bias=False)
        self.out = torch.nn.Linear(4, 2, bias=False)

    def forward(self, x, h):
        pre = self.inp(x) + self.rec(h)
        h = torch.tanh(pre)
        return pre, h, self.out(h)


model = Cell().eval()
with open(out + "/weights.bin", "wb") as f:  # W, b, U, V as little-endian float32, for the C engine
    for t in (model.inp.weight, model.inp.bias, model.rec.weight, model.out.weight):
        f.write(t.detach().numpy().astype("<f4").tobytes())
xs = torch.randn(5, 3)


def run(folder, net, reference=None):
    dtype = next(net.parameters()).dtype
    with BundleWriter(folder, case_id="rnn", kind="oracle-f64" if reference else "reference", reference=reference,
                      model=None if reference else {"name": "spot-rnn", "weights_file": out + "/weights.bin"}) as bundle:
        bundle.input("x", xs)
        h, k_h = torch.zeros(4, dtype=dtype), 0
        with torch.no_grad():
            for p in range(len(xs)):
                with bundle.begin_pass():
                    pre, h, y = net(xs[p].to(dtype), h)
                    k_pre = max(3 + 1, k_h + 4) + 1  # W x + b (3 taps, bias), U h (4 taps), their sum
                    k_h = k_pre + 4                  # tanh; the state carries its K to the next pass
                    for name, value, k in (("rnn.pre", pre, k_pre), ("rnn.h", h, k_h), ("rnn.y", y, k_h + 4)):
                        bundle.boundary(name, value, contract=None if reference else faithful_from_k(k, value))


run(out + "/reference", model)
with float64_copy(model) as twin:
    run(out + "/oracle-f64", twin, reference=out + "/reference")
`;

const ENGINE = String.raw`
#include "ti_helper.h"

#include <math.h>
#include <stdio.h>

enum { IN_X };
enum { B_PRE, B_H, B_Y };
enum { OPT_NO_BIAS };
static const tih_input INPUTS[] = {{"x", TI_F32, TIH_SHAPE(TIH_SYM("P"), TIH_DIM(3)), true, "one row per pass"}};
static const tih_boundary BOUNDARIES[] = {
    {"rnn.pre", NULL, TI_F32, TIH_SHAPE(TIH_DIM(4)), NULL, false, "W x + b + U h"},
    {"rnn.h", NULL, TI_F32, TIH_SHAPE(TIH_DIM(4)), NULL, true, "tanh(pre), carried to the next pass"},
    {"rnn.y", NULL, TI_F32, TIH_SHAPE(TIH_DIM(2)), NULL, false, "V h"},
};
static const tih_option OPTIONS[] = {{"perturb.no_bias", TIH_BOOL, "0", "forget b"}};
typedef struct rnn { float params[40]; float h[4]; } rnn; /* W[4][3], b[4], U[4][4], V[2][4] */

static ti_status rnn_open(tih_session *s, const char *config, const char *weights) {
    (void)config;
    rnn *r = tih_state(s);
    FILE *f = weights ? fopen(weights, "rb") : NULL;
    if (f == NULL) return tih_fail(s, TI_ERR_IO, "cannot open the weights %s", weights ? weights : "(none given)");
    size_t n = fread(r->params, sizeof(float), 40, f);
    fclose(f);
    return n == 40 ? TI_OK : tih_fail(s, TI_ERR_FORMAT, "%s: expected 40 float32 values", weights);
}

static ti_status rnn_pass(tih_session *s) {
    rnn *r = tih_state(s);
    const tih_tensor *x = tih_input_tensor(s, IN_X);
    uint32_t p = tih_pass_index(s);
    if (p >= x->shape[0]) return tih_fail(s, TI_ERR_STATE, "pass %u: x has %lld rows", p, (long long)x->shape[0]);
    const float *xp = (const float *)x->data + 3 * p, *W = r->params, *b = W + 12, *U = W + 16, *V = W + 32;
    float pre[4], y[2];
    const int64_t four = 4, two = 2;
    for (int i = 0; i < 4; i++) {
        float acc = tih_option_bool(s, OPT_NO_BIAS) ? 0.0f : b[i];
        for (int j = 0; j < 3; j++) acc += W[i * 3 + j] * xp[j];
        for (int j = 0; j < 4; j++) acc += U[i * 4 + j] * r->h[j];
        pre[i] = acc;
    }
    ti_status status = tih_emit(s, B_PRE, pre, 1, &four);
    for (int i = 0; i < 4; i++) r->h[i] = tanhf(pre[i]);
    if (status == TI_OK) status = tih_emit_injectable(s, B_H, r->h, 1, &four);
    for (int i = 0; i < 2; i++) {
        y[i] = 0.0f;
        for (int j = 0; j < 4; j++) y[i] += V[i * 4 + j] * r->h[j];
    }
    return status == TI_OK ? tih_emit(s, B_Y, y, 1, &two) : status;
}

const tih_engine TIH_ENGINE = {
    .name = "spot-rnn-c", .version = "1", .build_id = "test",
    .inputs = INPUTS, .input_count = 1, .boundaries = BOUNDARIES, .boundary_count = 3,
    .options = OPTIONS, .option_count = 1, .state_size = sizeof(rnn), .open = rnn_open, .pass = rnn_pass,
};
`;

let dir = '';
let library = '';
let key = '';
beforeAll(() => {
  dir = tempDir('rnn');
  writeFileSync(join(dir, 'model.py'), MODEL);
  const py = spawnSync('/usr/bin/python3', [join(dir, 'model.py'), dir], {
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, PYTHONPATH: join(REPO_ROOT, 'python') },
  });
  if (py.status !== 0) throw new Error(`the model script failed:\n${py.stdout}${py.stderr}`);
  writeFileSync(join(dir, 'engine.c'), ENGINE);
  library = join(dir, 'libspot.so');
  execFileSync('gcc', [
    '-std=c11',
    '-Wall',
    '-Wextra',
    '-Werror',
    '-O2',
    '-fPIC',
    '-shared',
    '-I',
    join(REPO_ROOT, 'engine', 'include'),
    '-I',
    join(REPO_ROOT, 'engine', 'helpers'),
    '-o',
    library,
    join(dir, 'engine.c'),
    join(REPO_ROOT, 'engine', 'helpers', 'ti_helper.c'),
    '-lm',
  ]);
  key = keyFiles(dir).privateKeyPath;
}, 240_000);

function gate(work: string, extra: readonly string[] = [], weights: string | null = join(dir, 'weights.bin')): ReturnType<typeof runCliProcess> {
  const named = weights === null ? [] : ['--weights', weights];
  return runCliProcess([
    '--gate',
    '--engine',
    library,
    '--bundle',
    join(dir, 'reference'),
    '--oracle',
    join(dir, 'oracle-f64'),
    ...named,
    '--work',
    join(dir, work),
    '--key',
    key,
    ...extra,
  ]);
}

describe('a model defined on the spot, its kit reference and a C engine built on the helper', () => {
  it('gates green against the reference and the float64 oracle', () => {
    const run = gate('green');
    expect(run.stdout).toContain('all 15 boundary rows PASS');
    expect(run.stdout).toMatch(/oracle\s+\S+oracle-f64\s+\(float64\)/);
    expect(run.stdout.trimEnd().split('\n').slice(-2)).toEqual(['FIDELITY: OK', 'OVERALL: PASSED']);
    expect(run.status).toBe(0);
  });

  it("refuses weights outside the weights roots unless named, and named weights that are not the reference's (exit 2, nothing run)", () => {
    // The kit wrote weights_file beside the case folder, outside the bundle: a bundle may not
    // make the gate read files outside the weights roots on its own.
    const unnamed = gate('unnamed', [], null);
    expect(unnamed.status).toBe(2);
    expect(unnamed.stderr).toContain('provenance.model.weights_file');
    expect(unnamed.stderr).toContain('outside the bundle folder and every weights root');
    expect(unnamed.stderr).toContain('--weights');
    // Named, but other bytes than the reference was made from: the digest still decides.
    const other = join(dir, 'other-weights.bin');
    const bytes = readFileSync(join(dir, 'weights.bin'));
    bytes[0] = (bytes[0] as number) ^ 0x01;
    writeFileSync(other, bytes);
    const wrong = gate('wrong-weights', [], other);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('provenance.model.weights_sha256');
    expect(wrong.stderr).toContain(`--weights ${other} hashes to`);
    expect(existsSync(join(dir, 'wrong-weights'))).toBe(false);
  });

  it('gates red at pass 0 rnn.pre when the engine forgets the bias', () => {
    const run = gate('red', ['--option', 'perturb.no_bias=1']);
    expect(run.stdout).toMatch(/first divergence: case rnn, pass 0 \/ rnn\.pre/);
    expect(run.stdout).toContain('FIDELITY: FAIL');
    expect(run.status).toBe(1);
  });
});
