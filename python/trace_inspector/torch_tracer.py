"""Capture a PyTorch model's boundaries into a BundleWriter with forward hooks.

    tracer = Tracer(model, {"layers.0": "wavenet.l0.out", "head": "wavenet.head"}, bundle,
                    contract=lambda name, value: faithful_from_k(K[name], value))
    with tracer:
        with bundle.begin_pass():
            y = model(x)
            tracer.record("cache.l3.k", k)

Hooks are registered on entry and removed on exit (also on error), so the model is left as it
was. Records keep execution order; a module called twice in one pass is an error unless it is
listed with a "{call}" placeholder in its boundary name (e.g. "depth.step{call}.out").
"""
import contextlib


class TracerError(ValueError):
    pass


class Tracer:
    def __init__(self, model, boundaries, writer, contract=None, capture="output", dtype=None):
        """model: a torch.nn.Module. boundaries: {module path (as in model.named_modules()):
        boundary name}. writer: the BundleWriter receiving the records. contract: a contract
        dict for all, or a function (name, value) -> contract. capture: "output" or "input" of
        each hooked module (or a dict by module path). dtype: store floats as this dtype
        (default: as computed)."""
        self.model = model
        self.boundaries = dict(boundaries)
        self.writer = writer
        self.contract = contract
        self.capture = capture
        self.dtype = dtype
        self.handles = []
        self.calls = {}
        modules = dict(model.named_modules())
        unknown = [path for path in self.boundaries if path not in modules]
        if unknown:
            raise TracerError(f"no module named {', '.join(map(repr, unknown))} in the model "
                              f"(known: {', '.join(list(modules)[1:12])}{' ...' if len(modules) > 12 else ''})")
        self.modules = {path: modules[path] for path in self.boundaries}

    def __enter__(self):
        for path, module in self.modules.items():
            what = self.capture.get(path, "output") if isinstance(self.capture, dict) else self.capture
            if what == "output":
                self.handles.append(module.register_forward_hook(self._output_hook(path)))
            elif what == "input":
                self.handles.append(module.register_forward_pre_hook(self._input_hook(path)))
            else:
                raise TracerError(f"capture for {path!r}: expected 'output' or 'input', found {what!r}")
        return self

    def __exit__(self, *_exc):
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
        return False

    def record(self, name, value, contract=None, **options):
        """Record an explicit tensor (a cache, a state, a token) in the current pass."""
        self.writer.boundary(name, value, contract=contract or self._contract(name, value),
                             dtype=options.pop("dtype", self.dtype), **options)

    def _contract(self, name, value):
        if callable(self.contract):
            return self.contract(name, value)
        return self.contract

    def _emit(self, path, value):
        import torch
        if isinstance(value, (tuple, list)):
            tensors = [v for v in value if isinstance(v, torch.Tensor)]
            if len(tensors) != 1:
                raise TracerError(f"module {path!r} produced {len(tensors)} tensors; record the one you want with tracer.record")
            value = tensors[0]
        if not isinstance(value, torch.Tensor):
            raise TracerError(f"module {path!r} produced {type(value).__name__}, not a tensor")
        pass_index = self.writer.current.index if self.writer.current is not None else None
        key = (pass_index, path)
        call = self.calls.get(key, 0)
        self.calls[key] = call + 1
        name = self.boundaries[path]
        if "{call}" in name:
            name = name.replace("{call}", str(call))
        elif call > 0:
            raise TracerError(f"module {path!r} ran {call + 1} times in pass {pass_index}; "
                              f"put {{call}} in its boundary name ({name!r}) to record each call")
        self.writer.boundary(name, value, contract=self._contract(name, value), dtype=self.dtype)

    def _output_hook(self, path):
        def hook(_module, _inputs, output):
            self._emit(path, output)
        return hook

    def _input_hook(self, path):
        def hook(_module, inputs):
            self._emit(path, inputs)
        return hook


@contextlib.contextmanager
def float64_copy(model):
    """A float64 deep copy of `model` for the oracle run (the original is left untouched)."""
    import copy
    twin = copy.deepcopy(model).double()
    try:
        yield twin
    finally:
        del twin
