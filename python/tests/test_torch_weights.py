"""save_weights / load_weights: a torch model's state_dict through one safetensors file."""
import os
import tempfile
import unittest

try:
    import torch
except ImportError:  # the kit works without torch; these tests need it
    torch = None

from trace_inspector.safetensors_file import read_safetensors


@unittest.skipIf(torch is None, "torch is not installed")
class TorchWeightsTest(unittest.TestCase):
    def test_round_trip_keeps_names_dtypes_values_and_metadata(self):
        from trace_inspector import load_weights, save_weights
        torch.manual_seed(1)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Conv1d(4, 2, 3))
        model[1].weight.data = model[1].weight.data.to(torch.bfloat16)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "w.safetensors")
            names = save_weights(model, path, {"config": {"width": 4}, "note": "text"})
            self.assertEqual(names, ["0.weight", "0.bias", "1.weight", "1.bias"])
            stored = read_safetensors(path)
            self.assertEqual(stored["1.weight"][0], "BF16")
            self.assertEqual(stored["0.weight"][0], "F32")
            with open(path, "rb") as f:
                header = f.read(200)
            self.assertIn(b'"config":"{\\"width\\": 4}"', header)
            twin = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Conv1d(4, 2, 3))
            twin[1].weight.data = twin[1].weight.data.to(torch.bfloat16)
            load_weights(twin, path)
            for (name, a), (_, b) in zip(model.state_dict().items(), twin.state_dict().items()):
                self.assertTrue(torch.equal(a, b), name)
                self.assertEqual(a.dtype, b.dtype, name)
            self.assertFalse(twin.training)

    def test_load_refuses_a_file_of_another_model(self):
        from trace_inspector import load_weights, save_weights
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "w.safetensors")
            save_weights(torch.nn.Linear(3, 4), path)
            with self.assertRaises(RuntimeError):
                load_weights(torch.nn.Linear(3, 5), path)


if __name__ == "__main__":
    unittest.main()
