"""Contracts derive from K and the precision, never from what passes."""
import unittest

import numpy as np

from trace_inspector import contracts as C


class FaithfulFromK(unittest.TestCase):
    def test_gamma_rule_numbers(self):
        ref = np.array([3.0, -4.0], dtype=np.float32)  # rms = sqrt(12.5)
        c = C.faithful_from_k(100, ref)
        g = 100 * 2.0 ** -24 / (1 - 100 * 2.0 ** -24)
        self.assertAlmostEqual(c["rel"], 2 * g, places=20)
        self.assertAlmostEqual(c["abs"], 2 * g * np.sqrt(12.5), places=15)
        self.assertEqual(c["derivation"]["accumulation_length"], 100)
        self.assertEqual(c["derivation"]["storage_dtype"], "F32")

    def test_a_zero_reference_needs_a_scale(self):
        silence = np.zeros(16, dtype=np.float32)
        with self.assertRaises(C.ContractError) as raised:
            C.faithful_from_k(512, silence)
        self.assertIn("scale=", str(raised.exception))
        c = C.faithful_from_k(512, silence, scale=0.25)
        self.assertGreater(c["abs"], 0.0)

    def test_bf16_storage_adds_one_rounding_per_side(self):
        ref = np.array([1.0], dtype=np.float32)
        c32 = C.faithful_from_k(10, ref, dtype="F32")
        c16 = C.faithful_from_k(10, ref, dtype="BF16")
        self.assertAlmostEqual(c16["rel"] - c32["rel"], 2 * 2.0 ** -8, places=15)
        self.assertEqual(c16["derivation"]["accumulation_dtype"], "F32")

    def test_refusals_name_the_field(self):
        with self.assertRaises(C.ContractError):
            C.faithful(-1, 0, C.derivation("F32", "F32", 1, "x", "y", "z"))
        with self.assertRaises(C.ContractError):
            C.bit_exact("")
        with self.assertRaises(C.ContractError):
            C.audio_bounds("d")
        with self.assertRaises(C.ContractError):
            C.faithful_from_k(10, np.array([1, 2], dtype=np.int32))


if __name__ == "__main__":
    unittest.main()
