"""safetensors files as trace bundles use them (docs/bundle-format.md): an 8-byte little-endian
header length, a JSON header, then the tensors back to back, row-major little-endian.

Owned here rather than taken from PyPI: the kit depends on numpy alone, and the format is small.
"""
import hashlib
import json
import struct

import numpy as np

from .dtypes import NUMPY_STORAGE


def write_safetensors(path, tensors, metadata=None):
    """Write `tensors`, a list of (key, bytes, dtype_name, shape), to `path`.

    The data is already in storage form (see dtypes.storage_bytes). Returns {key: sha256 hex of
    the tensor's bytes}, the digests the manifest records.
    """
    header = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    digests = {}
    offset = 0
    for key, data, dtype_name, shape in tensors:
        if key in header:
            raise ValueError(f"{path}: tensor key {key!r} is written twice")
        header[key] = {"dtype": dtype_name, "shape": [int(d) for d in shape],
                       "data_offsets": [offset, offset + len(data)]}
        digests[key] = hashlib.sha256(data).hexdigest()
        offset += len(data)
    header_bytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    # Pad with spaces to a multiple of 8 so the data stays aligned, as safetensors does.
    header_bytes += b" " * ((8 - len(header_bytes) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header_bytes)))
        f.write(header_bytes)
        for _key, data, _dtype, _shape in tensors:
            f.write(data)
    return digests


def read_safetensors(path):
    """Every tensor of `path` as {key: (dtype_name, numpy array in storage form)}."""
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: shorter than the 8-byte header length")
        (n,) = struct.unpack("<Q", raw)
        header = json.loads(f.read(n).decode("utf-8"))
        header.pop("__metadata__", None)
        out = {}
        for key, info in header.items():
            begin, end = info["data_offsets"]
            f.seek(8 + n + begin)
            data = f.read(end - begin)
            array = np.frombuffer(data, dtype=NUMPY_STORAGE[info["dtype"]]).reshape(info["shape"])
            out[key] = (info["dtype"], array.copy())
        return out


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
