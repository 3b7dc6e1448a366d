"""manifest.json text: indented JSON with one line per boundary entry, so a reader can scan it and
a diff names the boundary that changed."""
import json

SCHEMA = "trace-inspector.bundle"
SCHEMA_VERSION = 1


def manifest_text(manifest):
    def compact(value):
        return json.dumps(value, separators=(", ", ": "), allow_nan=False)

    def block(value):
        return json.dumps(value, indent=1, allow_nan=False).replace("\n", "\n ")

    lines = ["{"]
    keys = list(manifest)
    for n, key in enumerate(keys):
        comma = "," if n < len(keys) - 1 else ""
        if key != "passes":
            lines.append(f" {json.dumps(key)}: {block(manifest[key])}{comma}")
            continue
        lines.append(' "passes": [')
        for pi, p in enumerate(manifest["passes"]):
            head = compact({k: v for k, v in p.items() if k != "boundaries"})
            lines.append(f'  {head[:-1]}, "boundaries": [')
            entries = p["boundaries"]
            for bi, entry in enumerate(entries):
                lines.append("   " + compact(entry) + ("," if bi < len(entries) - 1 else ""))
            lines.append("  ]}" + ("," if pi < len(manifest["passes"]) - 1 else ""))
        lines.append(" ]" + comma)
    lines.append("}")
    text = "\n".join(lines) + "\n"
    if json.loads(text) != manifest:
        raise AssertionError("manifest serialisation does not round-trip")
    return text
