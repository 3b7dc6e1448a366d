"""Writes the NAM example's reference and float64 oracle bundles with the trace_inspector kit.

    PYTHONPATH=python:examples/nam python3 examples/nam/reference.py <out folder>

For each case: <out>/<case>/reference (the float32 model) and <out>/<case>/oracle-f64 (the same
weights in float64), one pass per audio buffer. The weights are examples/nam/weights/
nam-tiny.safetensors (made once by nam_model.make_weights), which the native engine reads too.
"""
import os
import sys

import numpy as np
import torch

from nam_model import CONFIG, SAMPLE_RATE, WaveNet, make_weights
from trace_inspector import BundleWriter, Tracer, faithful_from_k, float64_copy, load_weights

WEIGHTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weights", "nam-tiny.safetensors")
CASES = {"pluck": [64, 64, 64, 64], "ragged": [1, 37, 100, 5, 113]}  # buffer lengths per pass


def signal(case, n):
    """A decaying plucked string (5 harmonics), starting mid-cycle so no buffer is silent."""
    t = np.arange(n) / SAMPLE_RATE
    f0 = {"pluck": 110.0, "ragged": 164.8}[case]
    x = sum(np.sin(2 * np.pi * f0 * h * t + 0.3 * h) / h for h in range(1, 6)) * np.exp(-30 * t)
    return torch.tensor(0.4 * x, dtype=torch.float32)


def accumulation_lengths():
    """K per boundary, counted as docs/choosing-k.md says (examples/nam/README.md explains)."""
    K, k_x, head = {}, 0, None
    for i, a in enumerate(CONFIG["layers"]):
        k_x = K[f"wavenet.a{i}.rechannel"] = k_x + a["input_size"]      # 1x1 conv, no bias
        for j in range(len(a["dilations"])):
            p = f"wavenet.a{i}.l{j}"
            K[f"{p}.state"] = k_x                                      # copies of the layer's input
            K[f"{p}.z"] = k_x + a["kernel_size"] * a["channels"] + 2   # k*C taps, bias, + mixer
            K[f"{p}.act"] = K[f"{p}.z"] + 4 + 4 + 1                    # tanh, sigmoid, product
            head = K[f"{p}.act"] if head is None else max(head, K[f"{p}.act"]) + 1  # head sum
            k_x = K[f"{p}.out"] = max(k_x, K[f"{p}.act"] + a["channels"] + 1) + 1  # 1x1, bias, residual
        head = K[f"wavenet.a{i}.head"] = head + a["channels"] + int(a["head_bias"])  # head 1x1 (+ bias)
    K["wavenet.out"] = head + 1                                          # head_scale
    return K


def hooked_modules():
    """Module path -> boundary name (the Tracer records them in execution order)."""
    names = {}
    for i, a in enumerate(CONFIG["layers"]):
        names.update({f"arrays.{i}.rechannel": f"wavenet.a{i}.rechannel", f"arrays.{i}.head_rechannel": f"wavenet.a{i}.head"})
        for j in range(len(a["dilations"])):
            for module, what in ((".mix", "z"), (".gate", "act"), ("", "out")):
                names[f"arrays.{i}.layers.{j}{module}"] = f"wavenet.a{i}.l{j}.{what}"
    return names


def write(folder, model, case, reference=None):
    K, lengths, x = accumulation_lengths(), CASES[case], signal(case, sum(CASES[case]))
    contract = None if reference else (lambda name, value: faithful_from_k(K[name], value))
    with BundleWriter(folder, case_id=case, kind="oracle-f64" if reference else "reference", reference=reference,
                      description=f"NAM WaveNet, {sum(lengths)} samples at 48 kHz in buffers of {lengths}",
                      model=None if reference else {"name": "nam-wavenet-tiny", "checkpoint_revision": "seed-0", "weights_file": WEIGHTS}) as bundle:
        bundle.input("audio_in", x)
        bundle.input("buffer_lengths", torch.tensor(lengths, dtype=torch.int32))
        bundle.audio("wavenet.out", 48000)  # the output is PCM at 48 kHz (the oracle's declaration is the same)
        model.reset()
        with Tracer(model, hooked_modules(), bundle, contract=contract) as tracer, torch.no_grad():
            for buffer in torch.split(x.to(next(model.parameters()).dtype), lengths):
                with bundle.begin_pass(mode="buffer"):
                    tracer.record("wavenet.out", model(buffer))
                    for i, array in enumerate(model.arrays):
                        for j, layer in enumerate(array.layers):
                            tracer.record(f"wavenet.a{i}.l{j}.state", layer.state)


if __name__ == "__main__":
    make_weights(WEIGHTS)  # once: an existing file is kept
    model = load_weights(WaveNet(), WEIGHTS)
    for case in CASES:
        reference = os.path.join(sys.argv[1], case, "reference")
        write(reference, model, case)
        with float64_copy(model) as twin:
            write(os.path.join(sys.argv[1], case, "oracle-f64"), twin, case, reference=reference)
