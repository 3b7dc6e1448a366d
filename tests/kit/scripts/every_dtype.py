"""Writes a reference bundle holding every bundle dtype, a strided view and a valid region with
the kit, and prints the logical values it recorded as JSON (floats as repr strings, so NaN,
infinities and signed zeros survive), for the round-trip test to compare with what the
TypeScript reader decodes."""
import json
import sys

import numpy as np
import torch

from trace_inspector import BundleWriter, bit_exact, faithful_from_k

out, weights = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(11)
f32 = np.concatenate([rng.normal(size=10), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]]).astype(np.float32)
values = {
    "t.f32": (f32, None),
    "t.f64": (rng.normal(size=6), None),
    "t.f16": (rng.normal(size=6).astype(np.float16), None),
    "t.bf16": (torch.tensor(f32).to(torch.bfloat16), None),
    "t.bf16_from_f32": (f32, "BF16"),
    "t.i8": (np.array([-128, 0, 127], dtype=np.int8), None),
    "t.i16": (np.array([-32768, 5, 32767], dtype=np.int16), None),
    "t.i32": (np.array([-(2 ** 31), 7, 2 ** 31 - 1], dtype=np.int32), None),
    "t.i64": (np.array([-(2 ** 53), 9, 2 ** 53], dtype=np.int64), None),
    "t.u8": (np.array([0, 255], dtype=np.uint8), None),
    "t.u16": (np.array([0, 65535], dtype=np.uint16), None),
    "t.u32": (np.array([0, 2 ** 32 - 1], dtype=np.uint32), None),
    "t.u64": (np.array([0, 2 ** 53], dtype=np.uint64), None),
    "t.bool": (np.array([True, False, True]), None),
    "t.c64": ((rng.normal(size=4) + 1j * rng.normal(size=4)).astype(np.complex64), None),
    "t.strided": (torch.arange(12, dtype=torch.float32).reshape(3, 4).t(), None),
}
expected = {}


def logical(value, dtype):
    if isinstance(value, torch.Tensor):
        value = value.float() if value.dtype == torch.bfloat16 else value
        value = value.numpy()
    arr = np.asarray(value)
    if np.iscomplexobj(arr):
        arr = np.stack([arr.real, arr.imag], axis=-1)
    return [repr(float(v)) if arr.dtype.kind == "f" else (bool(v) if arr.dtype.kind == "b" else int(v)) for v in arr.ravel()]


with BundleWriter(out, case_id="every-dtype", description="kit round trip", model={"name": "kit-test", "weights_file": weights}) as bundle:
    bundle.input("prompt", np.array([1, 2, 3], dtype=np.int32))
    with bundle.begin_pass(mode="probe"):
        for name, (value, dtype) in values.items():
            is_float = (isinstance(value, torch.Tensor) and value.is_floating_point()) or np.asarray(value).dtype.kind in "fc"
            contract = faithful_from_k(4, value, dtype=dtype) if is_float else bit_exact("exact test values")
            bundle.boundary(name, value, contract=contract, dtype=dtype)
            expected[name] = logical(value, dtype)
        padded = np.concatenate([rng.normal(size=5), np.zeros(3)]).astype(np.float32)
        bundle.boundary("t.valid", padded, contract=faithful_from_k(4, padded), valid=(0, 5))
    with bundle.begin_pass():
        bundle.boundary("t.f32", f32 * 2, contract=faithful_from_k(4, f32 * 2))
print(json.dumps(expected))
