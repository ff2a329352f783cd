"""Regenerates the generated sections of README.md and docs/ (ops.md, how-it-works.md, policy.md)
from the C library's own tables (ops, options, fusion passes, the policy's
fields and rule rows, the environment variables) and its layer list
(delegate_c/LAYERS and each folder's README.md), so the docs cannot drift
from what the library does.

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


def passes_markdown() -> str:
    """The fuse stage's table (delegate_c/passes/fuse.c), in the order the passes run."""
    rows = ["| # | pass | what it rewrites | kernel sets | switched off by |", "|---:|---|---|---|---|"]
    for i, p in enumerate(_capi.fusion_passes(), 1):
        hook = (f"`{p['hook']}=0`" if p["hook"] else f"policy `{p['policy_field']}=0`" if p["policy_field"]
                else "always on")
        rows.append(f"| {i} | `{p['name']}` | {p['matches']} | {', '.join(p['kernel_sets'])} | {hook} |")
    return "\n".join(rows)


def layers_markdown() -> str:
    """delegate_c/'s layers in their order (delegate_c/LAYERS), each with its
    README.md: what lives there (its title and notes) and what it may use."""
    src = ROOT / "delegate_c"
    order = [line.split()[0] for line in (src / "LAYERS").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    rows = ["| # | folder | what lives there | files |", "|---:|---|---|---:|"]
    for i, name in enumerate(order, 1):
        lines = (src / name / "README.md").read_text().splitlines()
        title = lines[0].split(": ", 1)[1]
        notes = " ".join(ln.strip().lstrip("- ") for ln in lines[1:] if ln.strip() and not ln.startswith("May use:"))
        files = len([p for p in (src / name).iterdir() if p.suffix in (".c", ".h")])
        rows.append(f"| {i} | `{name}/` | **{title}**. {notes} | {files} |")
    return "\n".join(rows)


def policy_fields_markdown() -> str:
    """The policy's fields (select/policy.c) with the rule table's rows (select/policy_rules.c)."""
    rules = _capi.policy_rules()
    rows = ["| field | values | scope | what it chooses | " + " | ".join(rules) + " |",
            "|---|---|---|---|" + "---|" * len(rules)]
    for f in _capi.policy_fields():
        values = ", ".join(f["values"]) if f["values"] else f"{f['min']}-{f['max']}"
        rows.append(f"| `{f['name']}` | {values} | {f['scope']} | {f['help']} | " +
                    " | ".join(rules[r].get(f["name"], "") for r in rules) + " |")
    return "\n".join(rows)


def env_markdown() -> str:
    """Every environment variable the library reads (util/env_hooks.c)."""
    rows = ["| variable | kind | what it does |", "|---|---|---|"]
    rows += [f"| `{v['name']}` | {v['kind']} | {v['what']} |" for v in _capi.env_vars()]
    return "\n".join(rows)


def replace(text: str, name: str, body: str) -> str:
    start, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}\n{end}{tail}"


def pages() -> dict:
    """Each generated page and its sections, as the library's tables say they should read."""
    return {ROOT / "README.md": [("options", options_markdown())],
            ROOT / "docs" / "ops.md": [("ops", ops_markdown())],
            ROOT / "docs" / "how-it-works.md": [("passes", passes_markdown()), ("layers", layers_markdown())],
            ROOT / "docs" / "policy.md": [("policy-fields", policy_fields_markdown()), ("env", env_markdown())]}


def stale_pages(write: bool) -> list:
    """The pages whose generated sections differ from the tables; rewritten when write."""
    stale = []
    for page, sections in pages().items():
        old = new = page.read_text()
        for name, body in sections:
            new = replace(new, name, body)
        if new != old:
            stale.append(str(page.relative_to(ROOT)))
            if write:
                page.write_text(new)
    return stale


def main(argv: list) -> int:
    check = "--check" in argv
    stale = stale_pages(write=not check)
    if stale and check:
        print(f"{', '.join(stale)} stale: run python tools/gen_docs.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
