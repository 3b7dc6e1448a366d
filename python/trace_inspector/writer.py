"""BundleWriter: writes a trace bundle (docs/bundle-format.md) from Python values — inputs,
passes, boundaries, the manifest with every digest, and provenance filled in automatically.

    with BundleWriter("out/ref", case_id="sine-440", model={...}) as bundle:
        bundle.input("audio_in", x)
        with bundle.begin_pass(mode="audio"):
            bundle.boundary("layer0.out", y, contract=faithful_from_k(K, y))

Closing validates the bundle with the CLI's own rules (`trace-inspector check`) and reports
every problem at once. A writer never overwrites: the target folder must be absent or empty,
and a writer that fails removes the files it wrote, so no half bundle is left looking whole.
"""
import json
import os

import numpy as np

from . import contracts as C
from .bundle_check import check_bundle
from .dtypes import NUMPY_STORAGE, DTypeError, as_array, natural_dtype, storage_array
from .manifest_text import SCHEMA, SCHEMA_VERSION, manifest_text
from .provenance import generator_provenance, now_iso, runtime_versions
from .safetensors_file import file_sha256, write_safetensors

KINDS = ("reference", "oracle-f64")
PRECISIONS = ("float32", "float64", "bfloat16", "float16", "native")
DEFAULT_PRECISION = {"reference": "float32", "oracle-f64": "float64"}


class BundleWriterError(ValueError):
    pass


def _row_major(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return list(reversed(strides))


def _valid_region(valid, shape, name):
    if valid is None:
        return None
    if isinstance(valid, dict):
        region = {"axis": int(valid["axis"]), "length": int(valid["length"]), "padding": valid.get("padding", "zero")}
    else:
        axis, length, *rest = valid
        region = {"axis": int(axis), "length": int(length), "padding": rest[0] if rest else "zero"}
    if region["axis"] >= len(shape) or not 0 <= region["length"] <= shape[region["axis"]]:
        raise BundleWriterError(f"{name}: valid region {region} does not fit shape {list(shape)}")
    if region["padding"] not in ("zero", "any"):
        raise BundleWriterError(f"{name}: valid padding must be 'zero' or 'any', found {region['padding']!r}")
    return region


class _Pass:
    def __init__(self, writer, index, mode):
        self.writer, self.index, self.mode = writer, index, mode
        self.entries, self.tensors = [], []

    def __enter__(self):
        return self

    def __exit__(self, kind, _value, _tb):
        if kind is None:
            self.writer.end_pass()


class _ReferenceIndex:
    """dtypes and contracts of a written reference bundle, by (pass, boundary): an oracle stores
    each boundary as the reference declared it (rounded to nearest from float64) and, unless
    told otherwise, carries the same contract."""

    def __init__(self, folder):
        with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        self.manifest_sha256 = file_sha256(os.path.join(folder, "manifest.json"))
        self.entries = {(p["index"], b["name"]): b for p in manifest["passes"] for b in p["boundaries"]}
        self.inputs = {i["name"]: i for i in manifest["inputs"]}
        self.case = manifest["case"]
        self.audio = manifest.get("audio", {})
        self.pass_count = len(manifest["passes"])
        self.model = manifest["provenance"]["model"]


class BundleWriter:
    def __init__(self, folder, case_id, description="", kind="reference", model=None, precision=None,
                 runtime=None, generator=None, reference=None, pass_count=None, check=True):
        """folder: the bundle folder (absent or empty). kind: "reference" or "oracle-f64".
        model: {"name", "checkpoint_revision", "weights_file"} — weights_file is the weights'
        path (read once here for its sha256; recorded relative to the bundle folder); leave it
        out for an engine that embeds or generates its weights (the engine then opens with none).
        precision: what the producer computed in (default float32 for a reference, float64 for an
        oracle). runtime: extra {tool: version} beside python, numpy and torch. generator:
        overrides of the automatic generator provenance. reference: for an oracle, the
        reference bundle's folder: dtypes, contracts and the case come from it. pass_count:
        the number of passes the case has (default: the number written). check: validate with
        `trace-inspector check` on close (skipped with a warning when no CLI is found)."""
        if kind not in KINDS:
            raise BundleWriterError(f"kind: expected one of {', '.join(KINDS)}, found {kind!r}")
        self.folder = os.path.abspath(folder)
        if os.path.exists(self.folder) and (not os.path.isdir(self.folder) or os.listdir(self.folder)):
            raise BundleWriterError(f"{self.folder}: refusing to write into a non-empty folder (bundles are never overwritten)")
        self.kind = kind
        self.reference = _ReferenceIndex(reference) if reference is not None else None
        if kind == "oracle-f64" and self.reference is None:
            raise BundleWriterError("an oracle-f64 bundle needs reference=<the reference bundle folder>: "
                                    "it stores each boundary in the dtype the reference declared")
        self.precision = precision or DEFAULT_PRECISION[kind]
        if self.precision not in PRECISIONS:
            raise BundleWriterError(f"precision: expected one of {', '.join(PRECISIONS)}, found {self.precision!r}")
        self.case = {"id": case_id, "description": description}
        if not case_id:
            raise BundleWriterError("case_id: required (a short name for the case)")
        self.pass_count = pass_count
        self.model = self._model(model)
        self.runtime = runtime_versions(runtime)
        self.generator = {**generator_provenance(), **(generator or {})}
        self.check = check
        self.inputs, self.input_tensors, self.passes, self.known_gaps = [], [], [], []
        # An oracle declares the reference's audio boundaries unless told otherwise.
        self.audio_boundaries = dict(self.reference.audio) if self.reference is not None else {}
        self.files, self.written = [], []
        self.current = None
        self.closed = False
        os.makedirs(self.folder, exist_ok=True)

    # -- provenance -------------------------------------------------------------------------

    def _model(self, model):
        if self.reference is not None and model is None:
            return dict(self.reference.model)
        if not model or not model.get("name"):
            raise BundleWriterError("model: required, with name, checkpoint_revision and (unless the engine embeds "
                                    "or generates its weights) weights_file")
        named = {"name": model["name"], "checkpoint_revision": model.get("checkpoint_revision") or model["name"]}
        weights = model.get("weights_file")
        if weights is None:
            if model.get("weights_sha256"):
                raise BundleWriterError("model.weights_sha256 given without model.weights_file: name both or neither")
            return named
        if not weights or not os.path.isfile(weights):
            raise BundleWriterError(f"model.weights_file: {weights!r} is not a file (the weights the model ran with)")
        return {**named, "weights_file": os.path.relpath(os.path.abspath(weights), self.folder),
                "weights_sha256": model.get("weights_sha256") or file_sha256(weights)}

    # -- inputs, passes, boundaries ------------------------------------------------------------

    def input(self, name, value, dtype=None):
        """A named input of the case (prompt tokens, PCM, a seed...), stored as given or as dtype."""
        self._open()
        if any(i["name"] == name for i in self.inputs):
            raise BundleWriterError(f"input {name!r} is written twice")
        array, natural, _ = as_array(value, f"input {name}")
        target = dtype or natural or natural_dtype(array)
        stored = self._store(array, natural, target, f"input {name}", explicit=dtype is not None)
        self.input_tensors.append((name, stored.tobytes(order="C"), target, list(stored.shape)))
        self.inputs.append({"name": name, "dtype": target, "shape": list(stored.shape),
                            "file": "inputs.safetensors", "key": name, "sha256": None})

    def begin_pass(self, mode=None):
        """Start the next pass (0 is the prefill, every later one a decode). mode: an optional
        free label of what the pass produced ("text", "audio", ...). Usable as a context manager."""
        self._open()
        if self.current is not None:
            raise BundleWriterError(f"pass {self.current.index} is still open: end_pass() first")
        self.current = _Pass(self, len(self.passes), mode)
        return self.current

    def end_pass(self):
        p = self.current
        if p is None:
            raise BundleWriterError("end_pass() without begin_pass()")
        if not p.entries:
            raise BundleWriterError(f"pass {p.index} recorded no boundary: a pass that records nothing compares nothing")
        if self.reference is not None:
            missing = [name for (index, name) in self.reference.entries if index == p.index and not any(e["name"] == name for e in p.entries)]
            if missing:
                raise BundleWriterError(f"pass {p.index}: the reference records {', '.join(missing[:5])}"
                                        f"{' ...' if len(missing) > 5 else ''} and this oracle does not")
        file_name = f"pass-{p.index:03d}.safetensors"
        digests = self._write_tensors(file_name, p.tensors, {"pass_index": p.index})
        for entry in p.entries:
            entry["sha256"] = digests[entry["key"]]
        kind = "prefill" if p.index == 0 else "decode"
        self.passes.append({"index": p.index, "kind": kind, "mode": p.mode, "file": file_name, "boundaries": p.entries})
        self.current = None

    def boundary(self, name, value, contract=None, dtype=None, stage=None, valid=None):
        """Record one boundary of the current pass, in execution order.

        value: a torch tensor (any device, any dtype, strided views keep their strides) or a
        numpy array. contract: from trace_inspector.contracts (in an oracle, default: the
        reference's). dtype: store as this bundle dtype (a float narrowing rounds to nearest).
        stage: a group name (default: the name's first dotted part). valid: (axis, length[,
        padding]) when only a prefix along one axis is meaningful."""
        if self.current is None:
            raise BundleWriterError(f"boundary {name!r} recorded outside a pass: begin_pass() first")
        p = self.current
        if any(e["name"] == name for e in p.entries):
            raise BundleWriterError(f"pass {p.index}: boundary {name!r} is recorded twice")
        array, natural, strides = as_array(value, name)
        ref_entry = None
        if self.reference is not None:
            ref_entry = self.reference.entries.get((p.index, name))
            if ref_entry is None:
                raise BundleWriterError(f"pass {p.index}: the reference has no boundary {name!r}")
            dtype = dtype or ref_entry["dtype"]
            contract = contract or ref_entry["contract"]
            valid = valid if valid is not None else ref_entry["valid"]
        target = dtype or natural or natural_dtype(array)
        stored = self._store(array, natural, target, f"pass {p.index} {name}", explicit=dtype is not None)
        shape = list(stored.shape)
        if contract is None:
            raise BundleWriterError(f"pass {p.index} {name}: a contract is required (contracts.bit_exact(...) or faithful_from_k(...))")
        strides = strides if strides is not None and len(strides) == len(shape) else _row_major(shape)
        layout = "row-major" if all(s == r for s, r, e in zip(strides, _row_major(shape), shape) if e > 1) else "strided"
        if layout == "row-major":
            strides = _row_major(shape)
        p.tensors.append((name, stored.tobytes(order="C"), target, shape))
        p.entries.append({"name": name, "stage": stage or name.split(".")[0], "dtype": target, "shape": shape,
                          "strides": strides, "layout": layout, "key": name, "sha256": None,
                          "byte_length": int(stored.size) * NUMPY_STORAGE[target].itemsize,
                          "valid": _valid_region(valid, shape, name), "contract": contract})

    def audio(self, name, sample_rate):
        """Declare boundary `name` audio: each of its records is one-dimensional float PCM at
        `sample_rate` Hz (export-wav, the gate's audio metrics and the app's Audio panel use it)."""
        self._open()
        if not isinstance(sample_rate, int) or isinstance(sample_rate, bool) or not 0 < sample_rate <= 1_000_000:
            raise BundleWriterError(f"audio {name!r}: sample_rate must be a positive integer (Hz), found {sample_rate!r}")
        self.audio_boundaries[name] = {"sample_rate": sample_rate}

    def known_gap(self, gap_id, boundary, passes, reason, reopen_evidence):
        """Declare a boundary known to be broken (the ledger): it must keep failing."""
        self.known_gaps.append({"id": gap_id, "boundary": boundary, "passes": [int(i) for i in passes],
                                "reason": reason, "reopen_evidence": reopen_evidence})

    # -- closing ---------------------------------------------------------------------------

    def close(self):
        """Write inputs and manifest, then validate with `trace-inspector check`. Returns the
        manifest as a dict."""
        self._open()
        if self.current is not None:
            raise BundleWriterError(f"pass {self.current.index} was never ended")
        if not self.passes:
            raise BundleWriterError("no pass was written: a bundle that records nothing compares nothing")
        if self.reference is not None and len(self.passes) != self.reference.pass_count:
            raise BundleWriterError(f"the reference has {self.reference.pass_count} passes, this oracle {len(self.passes)}")
        for name in self.audio_boundaries:
            if not any(e["name"] == name for p in self.passes for e in p["boundaries"]):
                raise BundleWriterError(f"audio {name!r}: declared audio, but no pass recorded it")
        digests = self._write_tensors("inputs.safetensors", self.input_tensors, {})
        for entry in self.inputs:
            entry["sha256"] = digests[entry["name"]]
        case = dict(self.case)
        if self.reference is not None:
            case = dict(self.reference.case)
        case["pass_count"] = int(self.pass_count or len(self.passes))
        generator = dict(self.generator)
        if self.reference is not None and "teacher-forced" not in generator["implementation"]:
            generator["implementation"] += f"; oracle of the reference manifest sha256 {self.reference.manifest_sha256}"
        manifest = {
            "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "kind": self.kind, "case": case,
            "provenance": {"model": self.model, "generator": generator, "runtime": self.runtime,
                           "precision": self.precision, "created_at": now_iso()},
            "inputs": self.inputs, "passes": self.passes, "known_gaps": self.known_gaps, "files": self.files,
        }
        if self.audio_boundaries:
            manifest["audio"] = self.audio_boundaries
        path = os.path.join(self.folder, "manifest.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(manifest_text(manifest))
        self.written.append(path)
        self.closed = True
        if self.check:
            report = check_bundle(self.folder)
            if report is None:
                import warnings
                warnings.warn("trace_inspector: no trace-inspector CLI found (set TRACE_INSPECTOR_CLI); "
                              f"{self.folder} was not checked", stacklevel=2)
        return manifest

    def abandon(self):
        """Remove every file this writer wrote (and the folder when it is then empty)."""
        for path in self.written:
            if os.path.exists(path):
                os.remove(path)
        if os.path.isdir(self.folder) and not os.listdir(self.folder):
            os.rmdir(self.folder)
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, kind, _value, _tb):
        if kind is not None:
            if not self.closed:
                self.abandon()
            return False
        if not self.closed:
            try:
                self.close()
            except BundleWriterError:
                # Refused before the manifest was written: nothing that looks like a bundle stays.
                self.abandon()
                raise
        return False

    # -- helpers ---------------------------------------------------------------------------

    def _open(self):
        if self.closed:
            raise BundleWriterError(f"{self.folder}: the writer is closed")

    def _store(self, array, natural, target, name, explicit):
        try:
            return storage_array(array, natural, target, name, allow_rounding=explicit or self.kind == "oracle-f64")
        except DTypeError as error:
            raise BundleWriterError(str(error)) from None

    def _write_tensors(self, file_name, tensors, metadata):
        path = os.path.join(self.folder, file_name)
        if os.path.exists(path):
            raise BundleWriterError(f"{path}: already exists")
        self.written.append(path)
        digests = write_safetensors(path, tensors, {"schema": SCHEMA, "kind": self.kind, "case": self.case["id"], **metadata})
        self.files.append({"path": file_name, "sha256": file_sha256(path), "bytes": os.path.getsize(path)})
        return digests


def value_rms(value):
    """RMS of a value's finite elements, for a contract's scale (numpy or torch, any dtype)."""
    array, natural, _ = as_array(value, "value")
    if natural == "BF16":
        from .dtypes import bf16_bits_to_float32
        array = bf16_bits_to_float32(array)
    return C.finite_rms(np.asarray(array))
