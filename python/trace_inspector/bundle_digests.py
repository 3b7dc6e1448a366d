"""Verify every digest of a trace-inspector bundle without the CLI, in either digest scheme
(docs/bundle-format.md, "Digest schemes"): plain sha256, or tree-sha256 version 1 when the
manifest declares {"digests": {"scheme": "tree-sha256", "version": 1, "chunk_bytes": C}}.

    python3 -m trace_inspector.bundle_digests BUNDLE_FOLDER    (exit 0: every digest matches)

An implementation written from the specification alone, with the standard library: the project's
tests check the TypeScript reader and writers against it.
"""
import hashlib
import json
import os
import struct
import sys


def _u64(n):
    return struct.pack("<Q", n)


def leaf_digest(chunk):
    """leaf = sha256(0x00 || chunk bytes)."""
    return hashlib.sha256(b"\x00" + chunk).hexdigest()


def segment_digest(data, chunk_bytes):
    """sha256(0x01 || u64(len) || u64(C) || leaf of each C-byte chunk): a tensor's digest."""
    h = hashlib.sha256(b"\x01" + _u64(len(data)) + _u64(chunk_bytes))
    for at in range(0, len(data), chunk_bytes):
        h.update(bytes.fromhex(leaf_digest(data[at:at + chunk_bytes])))
    return h.hexdigest()


def tensor_ranges(data):
    """(data start, {key: (begin, end)} absolute) from a safetensors file's header."""
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    start = 8 + n
    return start, {k: (start + v["data_offsets"][0], start + v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"}


def file_digest(data, chunk_bytes):
    """The tree digest of a whole safetensors file: its segments are cut at 0, the end of the
    header, every tensor's begin and end, and the end of the file; each is hashed as a segment,
    then sha256(0x02 || u64(size) || u64(C) || u64(m) || (u64(offset) || u64(length) || digest)...)."""
    start, tensors = tensor_ranges(data)
    cuts = sorted({0, len(data), min(start, len(data))} | {min(x, len(data)) for r in tensors.values() for x in r})
    h = hashlib.sha256(b"\x02" + _u64(len(data)) + _u64(chunk_bytes) + _u64(len(cuts) - 1))
    for b, e in zip(cuts, cuts[1:]):
        h.update(_u64(b) + _u64(e - b) + bytes.fromhex(segment_digest(data[b:e], chunk_bytes)))
    return h.hexdigest()


def verify_bundle(folder):
    """Every digest problem of the bundle in `folder`, as (file, field, message); [] when none."""
    manifest = json.load(open(os.path.join(folder, "manifest.json"), encoding="utf-8"))
    declared = manifest.get("digests")
    chunk = declared["chunk_bytes"] if declared else None
    if declared and (declared.get("scheme"), declared.get("version")) != ("tree-sha256", 1):
        return [("manifest.json", "digests", f"unknown digest scheme {declared!r}")]
    plain = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    problems, contents = [], {}
    for i, entry in enumerate(manifest["files"]):
        data = open(os.path.join(folder, entry["path"]), "rb").read()
        contents[entry["path"]] = data
        actual = file_digest(data, chunk) if chunk else plain(data)
        if actual != entry["sha256"]:
            problems.append((entry["path"], f"files[{i}].sha256", f"lists {entry['sha256']}, the file hashes to {actual}"))
    claims = [(x["file"], x, f"inputs[{i}]") for i, x in enumerate(manifest["inputs"])]
    claims += [(p["file"], b, f"passes[{pi}].boundaries[{bi}]") for pi, p in enumerate(manifest["passes"]) for bi, b in enumerate(p["boundaries"])]
    for file, claim, at in claims:
        start, tensors = tensor_ranges(contents[file])
        b, e = tensors[claim["key"]]
        data = contents[file][b:e]
        actual = segment_digest(data, chunk) if chunk else plain(data)
        if actual != claim["sha256"]:
            problems.append((file, f"{at}.sha256", f"tensor {claim['key']!r}: lists {claim['sha256']}, its bytes hash to {actual}"))
        listed = claim.get("chunks")
        if listed:
            size = listed["bytes"]
            pieces = [data[o:o + size] for o in range(0, len(data), size)]
            got = [leaf_digest(p) if chunk else plain(p) for p in pieces]
            if got != listed["sha256"]:
                problems.append((file, f"{at}.chunks.sha256", f"tensor {claim['key']!r}: the chunk digests differ"))
    return problems


def main(argv):
    if len(argv) != 2:
        print("usage: python3 -m trace_inspector.bundle_digests BUNDLE_FOLDER", file=sys.stderr)
        return 2
    problems = verify_bundle(argv[1])
    for file, field, message in problems:
        print(f"{file}: {field}: {message}")
    if not problems:
        print(f"{argv[1]}: every digest matches")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
