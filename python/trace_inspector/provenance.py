"""Provenance a bundle records about its generator, filled in automatically: the generating
script and the git commit of the tree it lives in (with a dirty flag), the command line, the
runtime's versions and the time."""
import datetime
import hashlib
import os
import platform
import subprocess
import sys
import warnings

import numpy as np

KIT_VERSION = "0.1.0"


def _git(args, cwd):
    try:
        result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def generator_script():
    """The file of the program that is running (the script that writes the bundle)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return os.path.abspath(path) if path else None


def generator_provenance(script=None, implementation=None):
    """{implementation, revision, dirty, command} for the script writing the bundle.

    revision is the git commit of the script's tree, dirty whether that tree has uncommitted
    changes. A script outside git gets the sha256 of its own bytes as revision and dirty=True
    (the revision then pins that file only, not what it imports), with a warning."""
    script = script or generator_script()
    command = " ".join([os.path.basename(sys.executable)] + sys.argv) if sys.argv and sys.argv[0] else sys.executable
    folder = os.path.dirname(script) if script else os.getcwd()
    top = _git(["rev-parse", "--show-toplevel"], folder)
    revision = _git(["rev-parse", "HEAD"], folder) if top else None
    shown = script or "(interactive)"
    if top and script:
        shown = os.path.relpath(script, top)
    if revision:
        status = _git(["status", "--porcelain", "--untracked-files=no"], folder)
        dirty = bool(status)
    else:
        if script and os.path.isfile(script):
            with open(script, "rb") as f:
                revision = hashlib.sha256(f.read()).hexdigest()
        else:
            revision = hashlib.sha256(b"interactive").hexdigest()
        dirty = True
        warnings.warn(f"trace_inspector: {shown} is not in a git repository; provenance.generator.revision is "
                      "the sha256 of the script itself and dirty is true. Commit the generator to pin its source.",
                      stacklevel=3)
    return {"implementation": implementation or f"{shown} (trace_inspector kit {KIT_VERSION})",
            "revision": revision, "dirty": dirty, "command": command}


def runtime_versions(extra=None):
    """Versions of what computed the bundle: python, numpy, torch when it is loaded, the kit."""
    runtime = {"python": platform.python_version(), "numpy": np.__version__,
               "trace_inspector_kit": KIT_VERSION}
    torch = sys.modules.get("torch")
    if torch is not None:
        runtime["torch"] = str(torch.__version__)
    for key, value in (extra or {}).items():
        runtime[str(key)] = value if isinstance(value, (str, int, float, bool)) else str(value)
    return runtime


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
