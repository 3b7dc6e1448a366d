"""A PyTorch model's weights as one safetensors file that a native engine reads too.

    save_weights(model, "weights/my-model.safetensors", {"config": json.dumps(config)})
    load_weights(model, "weights/my-model.safetensors")

Every tensor of model.state_dict() is written under its state_dict name in its own dtype
(bfloat16 included), row-major little-endian; `metadata` goes into the header's __metadata__
(string values, e.g. the architecture as JSON, which the engine can parse).
"""
import json

from .dtypes import as_array, natural_dtype
from .safetensors_file import read_safetensors, write_safetensors


def save_weights(model, path, metadata=None):
    """Writes model.state_dict() to `path`; returns the names written."""
    tensors = []
    for name, tensor in model.state_dict().items():
        array, natural, _ = as_array(tensor, name)
        tensors.append((name, array.tobytes(order="C"), natural or natural_dtype(array), list(array.shape)))
    meta = {key: value if isinstance(value, str) else json.dumps(value) for key, value in (metadata or {}).items()}
    write_safetensors(path, tensors, meta)
    return [name for name, *_ in tensors]


def load_weights(model, path):
    """Loads every tensor of `path` into `model` (strict: names and shapes must match); returns
    the model in eval mode."""
    import torch
    state = {}
    for name, (dtype, array) in read_safetensors(path).items():
        if dtype == "BF16":  # stored as uint16 bit patterns, which torch has no dtype for
            state[name] = torch.from_numpy(array.view("int16").copy()).view(torch.bfloat16)
        else:
            state[name] = torch.from_numpy(array.copy())
    model.load_state_dict(state)
    return model.eval()
