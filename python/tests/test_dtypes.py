"""The kit's conversions to stored bytes: value-preserving or explicitly rounded, never silently."""
import struct
import unittest

import numpy as np

from trace_inspector.dtypes import DTypeError, round_to_bf16_bits, storage_array


def bf16_by_hand(value):
    """bfloat16 bits of a float64 value by exact rational comparison (no float32 step)."""
    if value != value:
        return None
    lo_bits = struct.unpack("<I", struct.pack("<f", np.float32(value)))[0] & 0xFFFF0000
    # walk the two bf16 neighbours around the float32 rounding
    candidates = []
    for bits in (lo_bits - 0x10000, lo_bits, lo_bits + 0x10000):
        if 0 <= bits <= 0xFFFFFFFF:
            f = struct.unpack("<f", struct.pack("<I", bits))[0]
            if np.isfinite(f):
                candidates.append((abs(f - value), (bits >> 16) & 1, bits >> 16))
    candidates.sort()
    best = candidates[0]
    tied = [c for c in candidates if c[0] == best[0]]
    if len(tied) > 1:
        return [c for c in tied if c[1] == 0][0][2]
    return best[2]


class Bf16Rounding(unittest.TestCase):
    def test_matches_exact_rounding_on_random_and_midpoint_values(self):
        rng = np.random.default_rng(7)
        values = list(rng.normal(size=2000) * 10.0 ** rng.integers(-5, 5, size=2000))
        # float64 values just above and below bf16 midpoints: a float32 step first would round them twice
        for base in (1.0, 3.0, -7.5, 1e-3):
            bits = struct.unpack("<I", struct.pack("<f", np.float32(base)))[0] & 0xFFFF0000
            mid = struct.unpack("<f", struct.pack("<I", bits | 0x8000))[0]
            values += [mid, mid + 1e-12 * abs(mid), mid - 1e-12 * abs(mid), np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)]
        got = round_to_bf16_bits(np.array(values, dtype=np.float64))
        for value, bits in zip(values, got):
            self.assertEqual(int(bits), bf16_by_hand(value), f"value {value!r}")

    def test_nan_and_infinity_survive(self):
        got = round_to_bf16_bits(np.array([np.nan, -np.nan, np.inf, -np.inf], dtype=np.float32))
        self.assertTrue(all((int(b) & 0x7F80) == 0x7F80 for b in got))
        self.assertNotEqual(int(got[0]) & 0x7F, 0)
        self.assertEqual(int(got[2]), 0x7F80)
        self.assertEqual(int(got[3]), 0xFF80)


class StorageRules(unittest.TestCase):
    def test_float_narrowing_needs_permission(self):
        values = np.array([0.1, 1.0 / 3.0])
        with self.assertRaises(DTypeError):
            storage_array(values, None, "F32", "x", allow_rounding=False)
        stored = storage_array(values, None, "F32", "x", allow_rounding=True)
        self.assertEqual(stored.dtype, np.float32)

    def test_integer_conversions_keep_every_value(self):
        storage_array(np.array([1, 2, 3], dtype=np.int64), None, "I32", "x", allow_rounding=False)
        with self.assertRaises(DTypeError):
            storage_array(np.array([2 ** 40], dtype=np.int64), None, "I32", "x", allow_rounding=True)
        with self.assertRaises(DTypeError):
            storage_array(np.array([1.5]), None, "I32", "x", allow_rounding=True)

    def test_widening_is_free(self):
        stored = storage_array(np.array([0.5], dtype=np.float32), None, "F64", "x", allow_rounding=False)
        self.assertEqual(stored.dtype, np.float64)


if __name__ == "__main__":
    unittest.main()
