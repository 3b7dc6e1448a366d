"""A tiny Neural Amp Modeler WaveNet in PyTorch, processing audio buffer by buffer.

The NAM architecture (github.com/sdatkinson/neural-amp-modeler, models/wavenet.py), written
here for streaming: layer arrays of dilated causal 1-D convolutions with gated activations
(tanh(a) * sigmoid(b)), a condition mixer (the dry input), 1x1 mixers with residuals, a head that
sums every layer's activation, and a scaled head output. Each layer keeps the last
(kernel - 1) * dilation columns of its input as state, so a signal split into buffers of any
lengths gives the same output as the whole signal at once. 48 kHz mono.

Tensors are unbatched [channels, time]. The architecture is config.json, which the native
engine compiles in; the weights are a safetensors file both sides read (see reference.py).
"""
import json
import os

import torch
from torch import nn

SAMPLE_RATE = 48_000
# Two layer arrays as in NAM's standard config, shrunk: array 0's head size is array 1's channels.
# config.json is read by the native engine too (one source for both sides).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.json"), encoding="utf-8") as f:
    CONFIG = json.load(f)


class Mix(nn.Module):
    """z = dilated causal conv of (state ++ x) + the condition mixer: [2C, T]."""

    def __init__(self, channels, condition_size, kernel_size, dilation):
        super().__init__()
        self.conv = nn.Conv1d(channels, 2 * channels, kernel_size, dilation=dilation)
        self.input_mixer = nn.Conv1d(condition_size, 2 * channels, 1, bias=False)

    def forward(self, full, c):
        return self.conv(full) + self.input_mixer(c)


class Gate(nn.Module):
    """The gated activation: tanh of the first half times sigmoid of the second."""

    def forward(self, z):
        channels = z.shape[0] // 2
        return torch.tanh(z[:channels]) * torch.sigmoid(z[channels:])


class Layer(nn.Module):
    def __init__(self, channels, condition_size, kernel_size, dilation):
        super().__init__()
        self.mix = Mix(channels, condition_size, kernel_size, dilation)
        self.gate = Gate()
        self.one_by_one = nn.Conv1d(channels, channels, 1)
        self.history = (kernel_size - 1) * dilation
        self.state = None

    def reset(self, channels, dtype):
        self.state = torch.zeros(channels, self.history, dtype=dtype)

    def forward(self, x, c):
        full = torch.cat([self.state, x], dim=1)
        self.activation = self.gate(self.mix(full, c))
        self.state = full[:, full.shape[1] - self.history:]
        return x + self.one_by_one(self.activation)


class LayerArray(nn.Module):
    def __init__(self, input_size, condition_size, channels, head_size, kernel_size, dilations, head_bias):
        super().__init__()
        self.channels = channels
        self.rechannel = nn.Conv1d(input_size, channels, 1, bias=False)
        self.layers = nn.ModuleList([Layer(channels, condition_size, kernel_size, d) for d in dilations])
        self.head_rechannel = nn.Conv1d(channels, head_size, 1, bias=head_bias)

    def forward(self, x, c, head_input):
        x = self.rechannel(x)
        for layer in self.layers:
            x = layer(x, c)
            head_input = layer.activation if head_input is None else head_input + layer.activation
        return self.head_rechannel(head_input), x


class WaveNet(nn.Module):
    def __init__(self, config=CONFIG):
        super().__init__()
        self.config = config
        self.arrays = nn.ModuleList([LayerArray(**array) for array in config["layers"]])
        self.head_scale = config["head_scale"]

    def reset(self):
        """Silence before the first buffer: every layer's state is zeros."""
        dtype = next(self.parameters()).dtype
        for array in self.arrays:
            for layer in array.layers:
                layer.reset(array.channels, dtype)

    def forward(self, buffer):
        """One buffer of samples [T] -> the output samples [T]; the state carries to the next."""
        c = buffer[None, :]
        x, head = c, None
        for array in self.arrays:
            head, x = array(x, c, head)
        return self.head_scale * head[0]


def make_weights(path):
    """Stands in for training: default initialisation from seed 0, written as safetensors with
    the architecture in its metadata (the native engine checks it against config.json). Writes
    once: an existing file is kept, so the checkpoint never changes under its bundles."""
    from trace_inspector import save_weights
    if os.path.exists(path):
        return
    torch.manual_seed(0)
    save_weights(WaveNet(), path, {"config": CONFIG, "sample_rate": SAMPLE_RATE})
