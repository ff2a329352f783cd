"""Regenerates the generated sections of README.md from the C library's own
tables (ops, options), so the docs cannot drift from what is delegated.

Usage: python tools/gen_docs.py [--check]
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from tflite_gpu import _capi  # noqa: E402
from tflite_gpu.cli_info import ops_markdown  # noqa: E402


def options_markdown() -> str:
    rows = ["| key | aliases | accepted values | default | meaning |", "|---|---|---|---|---|"]
    for o in _capi.options_schema():
        aliases = ", ".join(f"`{a}`" for a in o["aliases"])
        rows.append(f"| `{o['key']}` | {aliases} | {o['accepted']} | {o['default']} | {o['help']} |")
    return "\n".join(rows)


def replace(text: str, name: str, body: str) -> str:
    start, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}\n{end}{tail}"


def main() -> int:
    readme = ROOT / "README.md"
    old = readme.read_text()
    new = replace(replace(old, "ops", ops_markdown()), "options", options_markdown())
    if "--check" in sys.argv:
        if new != old:
            print("README.md is stale: run python tools/gen_docs.py")
            return 1
        return 0
    readme.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
