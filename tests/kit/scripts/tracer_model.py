"""A small PyTorch model captured with the kit's Tracer and its float64 oracle, for the kit tests.
Prints what the hooks saw (names per pass), whether hooks were removed, and errors raised by
misuse, as JSON."""
import json
import sys

import numpy as np
import torch

from trace_inspector import BundleWriter, Tracer, bit_exact, faithful_from_k
from trace_inspector.torch_tracer import TracerError, float64_copy

out, weights = sys.argv[1], sys.argv[2]
torch.manual_seed(3)


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x):
        return x + torch.tanh(self.proj(self.norm(x)))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(6, 8)
        self.blocks = torch.nn.ModuleList([Block(8), Block(8)])
        self.head = torch.nn.Linear(8, 5)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)


model = Net().eval()
names = {"inp": "net.inp", "blocks.0": "net.b0", "blocks.1": "net.b1", "head": "net.logits"}
K = {"net.inp": 7, "net.b0": 30, "net.b1": 53, "net.logits": 62}
x = torch.randn(4, 6)
report = {"passes": []}


def run(folder, net, kind, reference=None):
    with BundleWriter(folder, case_id="tracer", kind=kind, reference=reference,
                      model=None if reference else {"name": "tracer-net", "weights_file": weights}) as bundle:
        bundle.input("x", x)
        tracer = Tracer(net, names, bundle, contract=lambda name, value: faithful_from_k(K[name], value, dtype="F32"))
        with tracer:
            for step in range(4):
                with bundle.begin_pass():
                    logits = net(x[step:step + 1].to(next(net.parameters()).dtype))
                    tracer.record("net.token", logits.argmax(-1).to(torch.int32), contract=bit_exact("argmax"))
        report["hooks_left_" + kind] = sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in net.modules())


run(out + "/reference", model, "reference")
with float64_copy(model) as twin:
    run(out + "/oracle-f64", twin, "oracle-f64", reference=out + "/reference")

# Misuse: a module that runs twice in a pass without {call}, an unknown module path.
try:
    with BundleWriter(out + "/twice", case_id="t", model={"name": "n", "weights_file": weights}, check=False) as bundle:
        shared = torch.nn.Linear(3, 3)
        seq = torch.nn.Sequential(shared, shared)
        with Tracer(seq, {"0": "s.out"}, bundle, contract=bit_exact("x")):
            with bundle.begin_pass():
                seq(torch.zeros(1, 3))
except TracerError as error:
    report["twice"] = str(error)
try:
    Tracer(model, {"blocks.7": "x"}, None)
except TracerError as error:
    report["unknown"] = str(error)
report["twice_left_files"] = __import__("os").path.exists(out + "/twice")
print(json.dumps(report))
