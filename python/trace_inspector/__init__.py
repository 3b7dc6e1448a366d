"""trace_inspector: write trace-inspector reference bundles from Python.

BundleWriter writes a bundle (inputs, passes, boundaries, digests, provenance); contracts builds
per-boundary contracts (bit_exact, faithful, faithful_from_k with the gamma(K) rule, ULP, audio
bounds); Tracer records a PyTorch model's boundaries with forward hooks; save_weights / load_weights keep a
torch model's weights in one safetensors file a native engine reads too. See docs/python-kit.md.
"""
from . import contracts
from .bundle_check import BundleCheckError, check_bundle
from .contracts import audio_bounds, bit_exact, faithful, faithful_from_k, gamma, ulp
from .dtypes import DTypeError, round_to_bf16_bits
from .provenance import KIT_VERSION as __version__
from .writer import BundleWriter, BundleWriterError, value_rms


def Tracer(*args, **kwargs):  # noqa: N802 - a class name, imported lazily so torch stays optional
    from .torch_tracer import Tracer as _Tracer
    return _Tracer(*args, **kwargs)


def float64_copy(model):
    """A float64 deep copy of a torch model for the oracle run (context manager; torch_tracer)."""
    from .torch_tracer import float64_copy as _float64_copy
    return _float64_copy(model)


def save_weights(model, path, metadata=None):
    """model.state_dict() as one safetensors file (torch_weights)."""
    from .torch_weights import save_weights as _save_weights
    return _save_weights(model, path, metadata)


def load_weights(model, path):
    """A safetensors file into model, strictly (torch_weights)."""
    from .torch_weights import load_weights as _load_weights
    return _load_weights(model, path)


__all__ = ["BundleWriter", "BundleWriterError", "BundleCheckError", "DTypeError", "Tracer", "audio_bounds",
           "bit_exact", "check_bundle", "contracts", "faithful", "faithful_from_k", "float64_copy", "gamma",
           "load_weights", "round_to_bf16_bits", "save_weights", "ulp", "value_rms", "__version__"]
