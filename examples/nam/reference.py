"""Writes the NAM example's reference and float64 oracle bundles with the trace_inspector kit.

    PYTHONPATH=python python3 examples/nam/reference.py <out folder> [<weights.safetensors>]

For each case: <out>/<case>/reference (the float32 model) and <out>/<case>/oracle-f64 (the same
weights in float64), one pass per audio buffer. The weights are read from the safetensors file
(created once from seed 0 when it does not exist), which the native engine reads too.
"""
import os
import sys

import numpy as np
import torch

from nam_model import CONFIG, SAMPLE_RATE, WaveNet, load_weights, save_weights
from trace_inspector import BundleWriter, Tracer, faithful_from_k
from trace_inspector.torch_tracer import float64_copy

HERE = os.path.dirname(os.path.abspath(__file__))
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
        C, prefix = a["channels"], f"wavenet.a{i}"
        k_x = K[f"{prefix}.rechannel"] = k_x + a["input_size"]          # 1x1 conv, no bias
        for j in range(len(a["dilations"])):
            p = f"{prefix}.l{j}"
            K[f"{p}.state"] = k_x                                        # copies of the layer's input
            K[f"{p}.z"] = k_x + a["kernel_size"] * C + 2                 # k*C taps, bias, + mixer
            K[f"{p}.act"] = K[f"{p}.z"] + 4 + 4 + 1                      # tanh, sigmoid, product
            head = K[f"{p}.act"] if head is None else max(head, K[f"{p}.act"]) + 1  # head sum
            k_x = K[f"{p}.out"] = max(k_x, K[f"{p}.act"] + C + 1) + 1    # 1x1 + bias, residual
        head = K[f"{prefix}.head"] = head + C + int(a["head_bias"])      # head 1x1 (+ bias)
    K["wavenet.out"] = head + 1                                          # head_scale
    return K


def hooked_modules():
    """Module path -> boundary name, in execution order."""
    names = {}
    for i, a in enumerate(CONFIG["layers"]):
        names[f"arrays.{i}.rechannel"] = f"wavenet.a{i}.rechannel"
        for j in range(len(a["dilations"])):
            names.update({f"arrays.{i}.layers.{j}.mix": f"wavenet.a{i}.l{j}.z", f"arrays.{i}.layers.{j}.gate": f"wavenet.a{i}.l{j}.act",
                          f"arrays.{i}.layers.{j}": f"wavenet.a{i}.l{j}.out"})
        names[f"arrays.{i}.head_rechannel"] = f"wavenet.a{i}.head"
    return names


def write(folder, model, case, weights, reference=None):
    K, lengths = accumulation_lengths(), CASES[case]
    x = signal(case, sum(lengths))
    contract = None if reference else (lambda name, value: faithful_from_k(K[name], value))
    with BundleWriter(folder, case_id=case, kind="oracle-f64" if reference else "reference", reference=reference,
                      description=f"NAM WaveNet, {sum(lengths)} samples at 48 kHz in buffers of {lengths}",
                      model=None if reference else {"name": "nam-wavenet-tiny", "checkpoint_revision": "seed-0", "weights_file": weights}) as bundle:
        bundle.input("audio_in", x)
        bundle.input("buffer_lengths", torch.tensor(lengths, dtype=torch.int32))
        model.reset()
        with Tracer(model, hooked_modules(), bundle, contract=contract) as tracer, torch.no_grad():
            for buffer in torch.split(x.to(next(model.parameters()).dtype), lengths):
                with bundle.begin_pass(mode="buffer"):
                    tracer.record("wavenet.out", model(buffer))
                    for i, array in enumerate(model.arrays):
                        for j, layer in enumerate(array.layers):
                            tracer.record(f"wavenet.a{i}.l{j}.state", layer.state)


if __name__ == "__main__":
    out = sys.argv[1]
    weights = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "weights", "nam-tiny.safetensors")
    if not os.path.exists(weights):
        torch.manual_seed(0)
        os.makedirs(os.path.dirname(os.path.abspath(weights)), exist_ok=True)
        save_weights(WaveNet(), weights)
    model = load_weights(weights)
    for case in CASES:
        write(os.path.join(out, case, "reference"), model, case, weights)
        with float64_copy(model) as twin:
            write(os.path.join(out, case, "oracle-f64"), twin, case, weights, reference=os.path.join(out, case, "reference"))
