"""trace_inspector: write trace-inspector reference bundles from Python.

BundleWriter writes a bundle (inputs, passes, boundaries, digests, provenance); contracts builds
per-boundary contracts (bit_exact, faithful, faithful_from_k with the gamma(K) rule, ULP, audio
bounds); Tracer records a PyTorch model's boundaries with forward hooks. See docs/python-kit.md.
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


__all__ = ["BundleWriter", "BundleWriterError", "BundleCheckError", "DTypeError", "Tracer", "audio_bounds",
           "bit_exact", "check_bundle", "contracts", "faithful", "faithful_from_k", "gamma",
           "round_to_bf16_bits", "ulp", "value_rms", "__version__"]
