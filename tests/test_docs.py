"""The docs hang together: every relative link in README.md, docs/ (benchmarks too) and
examples/ points at a file that exists (and at a heading that exists)."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "examples").glob("*/README.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(page):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to '-'."""
    heads = re.findall(r"^#+\s+(.*)$", page.read_text(), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_resolve(page):
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page.name}: broken link {target}"
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest), f"{page.name}: no heading #{anchor} in {dest.name}"


def test_readme_links_the_guides():
    readme = (ROOT / "README.md").read_text()
    for doc in ("docs/quickstart.md", "docs/troubleshooting.md", "docs/how-it-works.md",
                "examples/minimal_cpp/README.md"):
        assert f"({doc})" in readme


# The GPU run is documented as plain commands: no terms of a machine-lending
# arrangement and no remote-call syntax (`run(command=..., carry=[...],
# timeout_s=...)`) in the README, the docs or tools/gpu_run.sh.
LENDING = re.compile(r"run\(command=|carry=\[|timeout_s=|device tool|\blent\b|\blend(?:s|ing)?\b", re.I)


def test_no_lending_terms_or_remote_calls():
    pages = [ROOT / "README.md", ROOT / "tools" / "gpu_run.sh", *sorted((ROOT / "docs").rglob("*.md"))]
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in pages
             for n, line in enumerate(p.read_text().splitlines(), 1) if LENDING.search(line)]
    assert not found, "\n".join(found)


def test_every_generated_section_is_current():
    """README.md, docs/how-it-works.md and docs/policy.md hold tables generated
    from the library (ops, options, passes, layers, the policy's fields and
    rules, the environment variables): each must read as the library says now."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import gen_docs

    assert gen_docs.stale_pages(write=False) == [], "run python tools/gen_docs.py"
