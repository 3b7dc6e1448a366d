"""Per-boundary contracts (docs/bundle-format.md "Contracts"; how to choose K: docs/choosing-k.md).

A tolerance is derived from a precision contract (storage dtype, accumulation dtype, the longest
accumulation path K, the reduction order), never from what passes; every faithful contract
carries that derivation, and the functions here write it for you.
"""
import math

import numpy as np

from .dtypes import UNIT_ROUNDOFF, bf16_bits_to_float32

NAN_POLICIES = ("positions", "positions_and_payload")
SIGNED_ZERO_POLICIES = ("ignore", "must_match")


class ContractError(ValueError):
    pass


def gamma(k, unit=2.0 ** -24):
    """The classic forward-error constant of k floating-point operations: k*u / (1 - k*u)."""
    if k < 0:
        raise ContractError(f"accumulation length K must be >= 0, found {k}")
    ku = k * unit
    if ku >= 1.0:
        raise ContractError(f"accumulation length K={k} is too long for a gamma bound at u={unit:g}")
    return ku / (1.0 - ku)


def _policy(value, allowed, what):
    if value not in allowed:
        raise ContractError(f"{what}: expected one of {', '.join(allowed)}, found {value!r}")
    return value


def bit_exact(reason, nan_policy="positions", signed_zero="must_match"):
    """Every element identical (NaN positions per nan_policy). For tokens, indices, copies,
    PRNG states and anything the specification determines exactly."""
    if not reason:
        raise ContractError("bit_exact: say why the value is exact (reason=...)")
    return {"kind": "bit_exact", "nan_policy": _policy(nan_policy, NAN_POLICIES, "nan_policy"),
            "signed_zero": _policy(signed_zero, SIGNED_ZERO_POLICIES, "signed_zero"), "reason": reason}


def derivation(storage_dtype, accumulation_dtype, accumulation_length, reduction_order, formula,
               allowed_differences):
    """What a faithful tolerance derives from; every field is required."""
    fields = {"storage_dtype": storage_dtype, "accumulation_dtype": accumulation_dtype,
              "accumulation_length": int(accumulation_length), "reduction_order": reduction_order,
              "formula": formula, "allowed_differences": allowed_differences}
    for key, value in fields.items():
        if value in (None, ""):
            raise ContractError(f"derivation.{key}: required")
    return fields


def faithful(abs, rel, derivation, max_ulp=None, oracle_rel=None, nan_policy="positions",
             signed_zero="ignore", audio=None):
    """An element passes when |n - r| <= abs + rel*|r|, or, when max_ulp is set, when it is within
    max_ulp units in the last place. `derivation` says where the numbers come from."""
    for key, value in (("abs", abs), ("rel", rel)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise ContractError(f"faithful: {key} must be a finite number >= 0, found {value!r}")
    if max_ulp is not None and (int(max_ulp) != max_ulp or max_ulp < 0):
        raise ContractError(f"faithful: max_ulp must be a whole number >= 0 or None, found {max_ulp!r}")
    if oracle_rel is not None and not (math.isfinite(oracle_rel) and oracle_rel >= 0):
        raise ContractError(f"faithful: oracle_rel must be a finite number >= 0 or None, found {oracle_rel!r}")
    contract = {"kind": "faithful", "abs": float(abs), "rel": float(rel),
                "max_ulp": None if max_ulp is None else int(max_ulp),
                "oracle_rel": None if oracle_rel is None else float(oracle_rel),
                "nan_policy": _policy(nan_policy, NAN_POLICIES, "nan_policy"),
                "signed_zero": _policy(signed_zero, SIGNED_ZERO_POLICIES, "signed_zero"),
                "derivation": derivation}
    if audio is not None:
        contract["audio"] = audio
    return contract


def ulp(max_ulp, storage_dtype, reason, nan_policy="positions", signed_zero="ignore"):
    """Within max_ulp units in the last place of the storage dtype (e.g. a correctly rounded
    elementwise function: 1 ULP, whatever the magnitude)."""
    return faithful(0.0, 0.0, derivation(storage_dtype, storage_dtype, 1, "elementwise",
                                         f"|ulp(n) - ulp(r)| <= {int(max_ulp)}", reason),
                    max_ulp=max_ulp, nan_policy=nan_policy, signed_zero=signed_zero)


def finite_rms(values):
    """Root mean square of the finite values (complex values by component), 0.0 when none."""
    arr = np.asarray(values)
    if arr.dtype == np.uint16:
        raise ContractError("finite_rms: got uint16; convert BF16 bit patterns with bf16_bits_to_float32 first")
    if np.iscomplexobj(arr):
        arr = np.stack([arr.real, arr.imag], axis=-1)
    arr = arr.astype(np.float64).ravel()
    arr = arr[np.isfinite(arr)]
    return float(math.sqrt(float(np.mean(arr * arr)))) if arr.size else 0.0


def _values(ref):
    """(float values, bundle dtype name) of a numpy array or torch tensor."""
    from .dtypes import as_array, natural_dtype
    array, natural, _ = as_array(ref, "ref")
    if natural == "BF16":
        return bf16_bits_to_float32(array), "BF16"
    name = natural_dtype(array)
    return array, "C64" if name == "C128" else name


def faithful_from_k(K, ref, dtype=None, accumulation_dtype=None, scale=None, sides=2,
                    reduction_order="unspecified", allowed_differences=None, nan_policy="positions",
                    signed_zero="ignore", max_ulp=None, oracle_rel=None, audio=None):
    """The gamma(K) rule of docs/choosing-k.md for a value computed in `accumulation_dtype` along
    an accumulation path of length K and stored as `dtype`:

        rel = sides * gamma(K),  abs = sides * gamma(K) * scale

    `sides` is one error bound per implementation being compared (2: the reference and the
    engine both round). `scale` is the magnitude the absolute floor is relative to: by default
    the RMS of the reference's finite values. A bound may not collapse to zero because the
    reference happens to be zero (digital silence, a zero-initialised state): when rms(ref) is
    0 you must pass `scale`, the RMS of what flows into the reduction, so a legal reordering of
    it still passes.
    """
    values, ref_dtype = _values(ref)
    dtype = dtype or ref_dtype
    if dtype not in UNIT_ROUNDOFF:
        raise ContractError(f"faithful_from_k: {dtype} is not a float dtype; use bit_exact for exact values")
    # bf16 and f16 values are computed in float32 by every framework unless told otherwise.
    accumulation_dtype = accumulation_dtype or ("F32" if dtype in ("BF16", "F16") else dtype)
    unit = UNIT_ROUNDOFF.get(accumulation_dtype)
    if unit is None:
        raise ContractError(f"faithful_from_k: accumulation dtype {accumulation_dtype} is not a float dtype")
    g = gamma(K, unit)
    rel = sides * g
    rms = finite_rms(values)
    scale_text = "rms(ref)"
    if scale is None:
        if rms == 0.0 and K > 0:
            raise ContractError(
                "faithful_from_k: rms(ref) is 0, so abs would be 0 and any legal reordering of a reduction that "
                "cancels to zero would fail; pass scale= (the RMS of the values flowing into the reduction)")
        scale = rms
    else:
        scale = float(scale)
        scale_text = f"scale {scale:.9g} (magnitude of the reduction's inputs)"
    storage_unit = UNIT_ROUNDOFF[dtype]
    extra = ""
    if storage_unit > unit:
        # Stored narrower than computed: one more rounding to storage on each side.
        rel += sides * storage_unit
        extra = f" + {sides}*u_storage (u_storage = {storage_unit:.3g}, one rounding to {dtype} per side)"
    abs_ = rel * scale
    formula = (f"rel = {sides}*gamma(K){extra} = {rel:.9g}, abs = rel*{scale_text} = {abs_:.9g}; "
               f"gamma(K) = K*u/(1-K*u), K = {K}, u = {unit:.9g}")
    return faithful(abs_, rel, derivation(dtype, accumulation_dtype, K, reduction_order, formula,
                                          allowed_differences or f"rounding of {accumulation_dtype} operations in any order along a path of at most {K} operations"),
                    max_ulp=max_ulp, oracle_rel=oracle_rel, nan_policy=nan_policy, signed_zero=signed_zero, audio=audio)


def audio_bounds(derivation, max_esr=None, min_snr_db=None, max_mr_stft=None,
                 max_null_residual_dbfs=None, max_null_offset=None):
    """Bounds on the audio metrics of a PCM boundary (docs/audio.md); at least one is set."""
    bounds = {"max_esr": max_esr, "min_snr_db": min_snr_db, "max_mr_stft": max_mr_stft,
              "max_null_residual_dbfs": max_null_residual_dbfs, "max_null_offset": max_null_offset,
              "derivation": derivation}
    if all(v is None for k, v in bounds.items() if k != "derivation"):
        raise ContractError("audio_bounds: set at least one bound")
    if not derivation:
        raise ContractError("audio_bounds: derivation is required (where the numbers come from)")
    return bounds
