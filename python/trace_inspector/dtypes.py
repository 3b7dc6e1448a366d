"""Element types of trace bundles and how Python values become their stored bytes.

Names are the safetensors dtype names the manifest uses (F32, BF16, ...). numpy has no bfloat16:
BF16 tensors travel as their uint16 bit patterns, and torch.bfloat16 tensors are converted to
those patterns without passing through float32 rounding.
"""
import numpy as np

DTYPE_NAMES = ("F32", "F16", "BF16", "F64", "I8", "I16", "I32", "I64",
               "U8", "U16", "U32", "U64", "BOOL", "C64")

# The numpy dtype holding a tensor's stored elements (little-endian).
NUMPY_STORAGE = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"), "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"), "U32": np.dtype("<u4"), "U16": np.dtype("<u2"), "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
    "C64": np.dtype("<c8"),  # interleaved float32 (re, im) pairs
}

FLOAT_DTYPES = ("F32", "F16", "BF16", "F64", "C64")

# Unit roundoff of each float storage type (half the distance from 1 to the next value).
UNIT_ROUNDOFF = {"F64": 2.0 ** -53, "F32": 2.0 ** -24, "C64": 2.0 ** -24,
                 "F16": 2.0 ** -11, "BF16": 2.0 ** -8}

_NUMPY_NAME = {
    np.dtype("float64"): "F64", np.dtype("float32"): "F32", np.dtype("float16"): "F16",
    np.dtype("int64"): "I64", np.dtype("int32"): "I32", np.dtype("int16"): "I16", np.dtype("int8"): "I8",
    np.dtype("uint64"): "U64", np.dtype("uint32"): "U32", np.dtype("uint16"): "U16", np.dtype("uint8"): "U8",
    np.dtype("bool"): "BOOL", np.dtype("complex64"): "C64", np.dtype("complex128"): "C128",
}


class DTypeError(ValueError):
    """A value cannot be stored as the requested dtype without a change the caller did not allow."""


def _torch():
    import sys
    return sys.modules.get("torch")


def is_torch_tensor(value):
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def as_array(value, name):
    """(numpy array of the logical values, natural dtype name, strides in elements or None).

    A torch tensor is detached and moved to the CPU; its strides are the ones it had (so a
    transposed view is recorded as strided); bfloat16 becomes its bit patterns with name BF16.
    """
    if is_torch_tensor(value):
        torch = _torch()
        tensor = value.detach()
        strides = list(tensor.stride())
        tensor = tensor.cpu()
        if tensor.dtype == torch.bfloat16:
            bits = tensor.contiguous().view(torch.int16).numpy().view(np.uint16)
            return bits, "BF16", strides
        return tensor.contiguous().numpy(), None, strides
    array = np.asarray(value)
    if array.dtype not in _NUMPY_NAME:
        raise DTypeError(f"{name}: numpy dtype {array.dtype} has no bundle dtype")
    strides = None
    if array.ndim > 0 and array.itemsize > 0 and all(s % array.itemsize == 0 for s in array.strides):
        strides = [s // array.itemsize for s in array.strides]
    return array, None, strides


def natural_dtype(array):
    return _NUMPY_NAME[array.dtype]


def round_to_bf16_bits(values):
    """Round float32 or float64 values to bfloat16, to nearest with ties to even, in ONE rounding
    (a float64 value is not first rounded to float32, which could round twice). NaN stays NaN
    with its sign; infinities stay infinite."""
    x = np.asarray(values)
    f32 = x.astype(np.float32)
    bits = f32.view(np.uint32).astype(np.uint64)
    lower = bits & 0xFFFF
    upper = bits >> 16
    # ties to even on the float32 bits
    round_up = (lower > 0x8000) | ((lower == 0x8000) & ((upper & 1) == 1))
    if x.dtype == np.float64:
        # f32 sits exactly half way between two bf16 values only after its own rounding: decide
        # by the float64 value, which is not a tie unless it equals f32.
        midway = (lower == 0x8000) & (f32.astype(np.float64) != x) & np.isfinite(x)
        away = np.abs(x) > np.abs(f32.astype(np.float64))
        round_up = np.where(midway, away, round_up)
    rounded = (upper + round_up.astype(np.uint64)) & 0xFFFF
    nan = np.isnan(f32)
    quiet = (upper | 0x0040) & 0xFFFF
    return np.where(nan, quiet, rounded).astype(np.uint16)


def bf16_bits_to_float32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def storage_array(array, natural, target, name, allow_rounding):
    """The array in `target`'s storage form.

    Integer and boolean conversions must keep every value; a float narrowing (F64 -> F32, F32
    -> BF16, complex128 -> C64, ...) rounds to nearest and needs allow_rounding, which the
    writer grants for an explicit dtype and for oracle bundles."""
    if target not in NUMPY_STORAGE:
        raise DTypeError(f"{name}: unknown dtype {target!r} (one of {', '.join(DTYPE_NAMES)})")
    source = natural or natural_dtype(array)
    if source == target:
        return np.ascontiguousarray(array, dtype=NUMPY_STORAGE[target])
    source_float = source in FLOAT_DTYPES or source == "C128"
    target_float = target in FLOAT_DTYPES
    if source == "BF16":
        array = bf16_bits_to_float32(array)
        source = "F32"
    if source_float and target_float:
        if target == "C64" and not np.iscomplexobj(array):
            raise DTypeError(f"{name}: C64 needs complex values, found {source}")
        if np.iscomplexobj(array) and target != "C64":
            raise DTypeError(f"{name}: complex values cannot be stored as {target}")
        widening = UNIT_ROUNDOFF.get(target, 0) <= UNIT_ROUNDOFF.get(source, 2.0 ** -53) and source != "C128"
        if not widening and not allow_rounding:
            raise DTypeError(
                f"{name}: storing {source} values as {target} rounds them; pass dtype={target!r} "
                "explicitly (or write an oracle-f64 bundle) to say that rounding is intended")
        if target == "BF16":
            return round_to_bf16_bits(np.asarray(array, dtype=np.float64 if source in ("F64",) else np.float32))
        return np.ascontiguousarray(np.asarray(array).astype(NUMPY_STORAGE[target]))
    converted = np.asarray(array).astype(NUMPY_STORAGE[target])
    back = converted.astype(array.dtype)
    if not np.array_equal(back, array, equal_nan=bool(source_float)):
        raise DTypeError(f"{name}: storing {source} values as {target} would change them")
    return np.ascontiguousarray(converted)
