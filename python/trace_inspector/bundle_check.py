"""Validation of a written bundle with the rules the trace-inspector CLI applies: the kit runs
`trace-inspector check <bundle>` (every problem reported at once) when it can find the CLI."""
import json
import os
import shutil
import subprocess


class BundleCheckError(ValueError):
    """The CLI found problems in the bundle; `problems` lists each with its file and field."""

    def __init__(self, folder, problems, output):
        self.folder = folder
        self.problems = problems
        lines = "\n".join(f"  {p.get('file', folder)}: {p.get('field', '')}: {p.get('message', '')}" for p in problems)
        super().__init__(f"{folder}: trace-inspector check found {len(problems)} problem(s):\n{lines or output}")


def find_cli():
    """The command that runs the trace-inspector CLI: $TRACE_INSPECTOR_CLI, `trace-inspector` on
    PATH, or this repository's bin/trace-inspector.js with node. None when there is none."""
    explicit = os.environ.get("TRACE_INSPECTOR_CLI")
    if explicit:
        return explicit.split()
    on_path = shutil.which("trace-inspector")
    if on_path:
        return [on_path]
    here = os.path.dirname(os.path.abspath(__file__))
    repo_bin = os.path.join(here, "..", "..", "bin", "trace-inspector.js")
    node = shutil.which("node")
    if node and os.path.isfile(repo_bin):
        return [node, os.path.normpath(repo_bin)]
    return None


def check_bundle(folder, cli=None):
    """Run `trace-inspector check --json - <folder>`. Returns the report dict; raises
    BundleCheckError listing every problem; returns None when no CLI can be found."""
    command = cli or find_cli()
    if command is None:
        return None
    result = subprocess.run([*command, "check", "--json", "-", folder], capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise BundleCheckError(folder, [], (result.stdout + result.stderr).strip()) from None
    if result.returncode != 0 or not report.get("ok", False):
        raise BundleCheckError(folder, report.get("problems", []), result.stderr.strip())
    return report
