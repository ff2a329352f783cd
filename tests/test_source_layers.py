"""The library's architecture, checked: delegate_c/ is one folder per layer,
in the order delegate_c/LAYERS writes once, and every dependency runs down
that order, with no exception list:

* no .c or .h directly in delegate_c/, none outside a layer folder, at
  least source_graph.MIN_C_FILES read (a walk that found nothing fails);
* each folder has a README.md saying what lives there and which folders
  it may use (the ones above it in LAYERS);
* no #include, no call and no named function (an address taken: a table
  of callbacks) reaches a later layer, read from the sources; no symbol a
  built object references, function or data, is defined in a later layer,
  read from the objects (nm);
* no circle: between files by #include, between modules by call (from the
  sources and from the objects' call relocations), between the Python
  package's modules by import;
* node kinds are data (model/graph.h GOp): no file outside ops/ names a
  GOpDesc or a kGOp* encoder.

Each rule is shown to fail on a copy of the tree with one planted edge: an
upward include, an upward call, a circle between two modules of one
layer, and a circle between two Python modules."""
from __future__ import annotations

import pathlib
import re
import shutil

import pytest

import source_graph as sg

ROOT, SRC = sg.ROOT, sg.SRC
BUILD = ROOT / "build-layout"
CALL_RELOCATIONS = {"R_X86_64_PLT32", "R_AARCH64_CALL26", "R_AARCH64_JUMP26"}


def test_every_file_is_in_a_layer_folder():
    files = sg.c_files()
    assert len(files) >= sg.MIN_C_FILES, len(files)
    loose = [p.name for p in SRC.iterdir() if p.suffix in (".c", ".h")]
    assert not loose, f"files directly in delegate_c/ (put each in its layer's folder): {loose}"
    order = sg.layers()
    assert order[0] == "include" and order[-1] == "api" and len(set(order)) == len(order), order
    folders = {p.name for p in SRC.iterdir() if p.is_dir() and not p.name.startswith(("build", "."))}
    assert folders == set(order), f"folders not in LAYERS: {folders - set(order)}; missing: {set(order) - folders}"
    outside = [sg.rel(p) for p in files if sg.layer_of(sg.rel(p)) not in order]
    assert not outside, outside


def test_each_folder_says_what_lives_there_and_what_it_may_use():
    order = sg.layers()
    for i, name in enumerate(order):
        readme = SRC / name / "README.md"
        assert readme.is_file(), f"{name}/ has no README.md"
        text = readme.read_text()
        assert text.startswith(f"# {name}/: "), f"{name}/README.md: the first line is '# {name}/: what lives here'"
        may = ", ".join(f"{o}/" for o in order[:i]) or "nothing else in delegate_c/"
        assert f"May use: {may}." in text, f"{name}/README.md lacks 'May use: {may}.'"


def test_dependencies_run_down_the_layers():
    problems = sg.upward_edges()
    assert not problems, "edges that run up delegate_c/LAYERS:\n" + "\n".join(problems)


def _objects():
    return sg.build_objects(BUILD)


def _obj_name(obj: pathlib.Path) -> str:
    return obj.relative_to(BUILD / "obj").with_suffix(".c").as_posix()


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils (tools/setup.sh installs them)")
def test_no_symbol_reference_runs_up_the_layers():
    objects = _objects()
    assert len(objects) >= 100, len(objects)
    defined, used = sg.object_symbols(objects)
    owner = {sym: _obj_name(o) for o, syms in defined.items() for sym in syms}
    rank = {name: i for i, name in enumerate(sg.layers())}
    up = sorted(f"{_obj_name(o)} -> {owner[s]}: {s}" for o, syms in used.items() for s in syms
                if s in owner and rank[sg.layer_of(owner[s])] > rank[sg.layer_of(_obj_name(o))])
    # The check is real: objects reference symbols of the layers below them.
    assert "ops/op_kinds.c" in {owner.get(s) for s in used[BUILD / "obj" / "runtime" / "executor.o"]}
    assert not up, "references that run up delegate_c/LAYERS (from the objects):\n" + "\n".join(up)


@pytest.mark.skipif(shutil.which("readelf") is None or shutil.which("nm") is None,
                    reason="needs binutils (tools/setup.sh installs them)")
def test_no_circle_in_the_call_graph():
    """file.c -> the files whose functions its machine code calls (a call or
    tail-call relocation): a circle of calls between files. Addresses stored
    rather than called are not calls here (the layers check them above)."""
    import subprocess

    objects = _objects()
    defined, calls = {}, {}
    for obj in objects:
        nm = subprocess.run(["nm", "--defined-only", str(obj)], capture_output=True, text=True, check=True).stdout
        defined[_obj_name(obj)] = {p[2] for p in map(str.split, nm.splitlines()) if len(p) == 3 and p[1] in "TW"}
        relocs = subprocess.run(["readelf", "-rW", str(obj)], capture_output=True, text=True, check=True).stdout
        section, called = "", set()
        for line in relocs.splitlines():
            m = re.match(r"Relocation section '([^']+)'", line)
            if m:
                section = m.group(1)
                continue
            p = line.split()
            if len(p) >= 5 and p[2] in CALL_RELOCATIONS and ".text" in section:
                called.add(re.sub(r"[+-].*$", "", p[4]))
        calls[_obj_name(obj)] = called
    owner = {sym: f for f, syms in defined.items() for sym in syms}
    edges = {f: sorted({owner[s] for s in called if s in owner} - {f}) for f, called in calls.items()}
    assert "delegate/partition_kernel.c" in edges["delegate/delegate.c"], edges["delegate/delegate.c"]
    assert "ops/op_helpers.c" in edges["ops/ops_conv.c"], edges["ops/ops_conv.c"]
    found = sorted(sg.circles(edges), key=sorted)
    assert not found, "call circles between files:\n" + sg.describe(found, edges)


def test_no_circle_in_the_include_graph():
    edges, _ = sg.include_graph()
    assert sum(map(len, edges.values())) > 300, "the include graph is nearly empty: was anything read?"
    found = sg.circles(edges)
    assert not found, "include circles:\n" + sg.describe(found, edges)


def test_no_circle_between_modules():
    """No circle between modules by call, directly or through others.

    The rule (source_graph.module_graph): a module is x.c with x.h of one
    folder; a .c without a header of its own that defines functions a
    module's header declares belongs to that module. Module A depends on
    module B when code in A's function bodies, macros or initializers calls
    a function B declares or defines (static inline functions and
    function-like macros of B.h included). Types, enum values, constants and
    a stored address are no calls here."""
    edges = sg.module_graph()
    # The graph is real: folded constants have one owner above the view.
    assert "model/model_view" in edges["model/int_fold"], edges["model/int_fold"]
    assert {"model/int_fold", "model/model_view"} <= set(edges["model/const_fold"]), edges["model/const_fold"]
    assert "ops/op_helpers" in edges["ops/ops_reduce"] and "delegate/partition" in edges["delegate/delegate"]
    found = sg.shortest_circles(edges)
    assert not found, "circles between modules:\n" + "\n".join(found)


def test_no_circle_between_python_modules():
    edges = sg.python_imports(ROOT / "python" / "tflite_gpu")
    assert len(edges) >= 20 and "check_base" in edges["check_bisect"], edges.get("check_bisect")
    found = sg.circles(edges)
    assert not found, "import circles in python/tflite_gpu:\n" + sg.describe(found, edges)


def test_node_kinds_are_data():
    named = sorted(sg.rel(p) for p in sg.c_files() if not sg.rel(p).startswith("ops/")
                   and re.search(r"\bGOpDesc\b|\bkGOp\w+", sg._c_code(p.read_text())))
    assert not named, f"files outside ops/ that name an encoder (use the node kind, model/graph.h GOp): {named}"


# ---- the checks fail where they should: copies of delegate_c/ with one edge planted

def _tree(tmp_path, name, **appended):
    """A copy of delegate_c/ with text appended to some files (keyword: the
    path from delegate_c/ with / as __ and the last . as _: model__graph_c)."""
    root = tmp_path / name
    shutil.copytree(SRC, root, ignore=shutil.ignore_patterns("*.o", "*.so", "build*"))
    for key, text in appended.items():
        folder, file = key.split("__")
        stem, suffix = file.rsplit("_", 1)
        path = root / folder / f"{stem}.{suffix}"
        path.write_text(path.read_text() + text)
    return root


def test_the_clean_copy_passes(tmp_path):
    root = _tree(tmp_path, "clean")
    assert sg.upward_edges(root) == [] and sg.shortest_circles(sg.module_graph(root)) == []


def test_an_upward_include_fails(tmp_path):
    root = _tree(tmp_path, "include", model__graph_c='\n#include "vm/vm.h"\n')
    assert sg.upward_edges(root) == ["model/graph.c -> vm/vm.h: includes a later layer's header"]


def test_an_upward_call_fails(tmp_path):
    root = _tree(tmp_path, "call", cl__cl_device_c="\nvoid gd_drop_plan(void) { executor_free(0); }\n")
    problems = sg.upward_edges(root)
    assert problems == ["cl/cl_device -> runtime/executor: cl/cl_device.c names executor_free"], problems


def test_an_upward_address_fails(tmp_path):
    """A callback stored, not called, still depends on its owner."""
    root = _tree(tmp_path, "address", util__log_c="\nvoid* const kLogFree = (void*)executor_free;\n")
    problems = sg.upward_edges(root)
    assert problems == ["util/log -> runtime/executor: util/log.c names executor_free"], problems


def test_a_circle_inside_a_layer_fails(tmp_path):
    """util/log calls util/env_hooks (allowed: one layer), and env_hooks
    calling back into log closes a circle."""
    root = _tree(tmp_path, "circle", util__log_c='\n#include "util/env_hooks.h"\nint gd_log_flag(void) '
                 '{ return env_flag("X", 0); }\n',
                 util__env_hooks_c='\n#include "util/log.h"\nvoid env_say(void) { gd_log(0, 0, "x"); }\n')
    assert sg.upward_edges(root) == []
    found = sg.shortest_circles(sg.module_graph(root))
    assert len(found) == 1 and found[0].splitlines()[0] == "util/env_hooks -> util/log -> util/env_hooks", found
    assert "util/log.c calls env_flag" in found[0] and "util/env_hooks.c calls gd_log" in found[0], found


def test_a_python_import_circle_fails(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import x\n    return x\n")
    (pkg / "c.py").write_text("from pkg import a\n")
    edges = sg.python_imports(pkg)
    assert edges == {"__init__": [], "a": ["b"], "b": ["a"], "c": ["a"]}, edges
    assert sg.circles(edges) == [frozenset({"a", "b"})]


def test_a_circle_hidden_in_a_helper_file_or_through_others_fails(tmp_path):
    """A call put back from the view into int_fold (model/): directly, from a
    file of its own that implements model_view.h (still the view's module),
    and through a third module; types, values and a stored address make no
    circle."""
    call_back = "\nint mv_folds(const ModelView* mv, int t) { return int_fold_is_output(mv, t); }\n"
    root = _tree(tmp_path, "direct", model__model_view_c='#include "model/int_fold.h"\n' + call_back)
    found = sg.shortest_circles(sg.module_graph(root))
    assert [c.splitlines()[0] for c in found] == ["model/int_fold -> model/model_view -> model/int_fold"], found
    assert "model/model_view.c calls int_fold_is_output" in found[0], found
    root = _tree(tmp_path, "hidden", model__model_view_h="int mv_folds(const ModelView* mv, int t);\n")
    (root / "model" / "model_fold_access.c").write_text('#include "model/int_fold.h"\n' + call_back)
    found = sg.shortest_circles(sg.module_graph(root))
    assert [c.splitlines()[0] for c in found] == ["model/int_fold -> model/model_view -> model/int_fold"], found
    assert "model/model_fold_access.c calls int_fold_is_output" in found[0], found
    root = _tree(tmp_path, "longer", model__sparse_densify_c='#include "model/int_fold.h"\nint densify_folds('
                 "const ModelView* mv, int t) { return int_fold_is_output(mv, t); }\n")
    found = sg.shortest_circles(sg.module_graph(root))
    assert [c.splitlines()[0] for c in found] == [
        "model/int_fold -> model/model_view -> model/sparse_densify -> model/int_fold"], found
    root = _tree(tmp_path, "types", model__model_view_c='#include "model/int_fold.h"\nstatic int (*const kFolds)('
                 "const ModelView*, int) = int_fold_is_output;\nint mv_fold_max(void) { return INT_FOLD_MAX + "
                 "(kFolds != 0); }\n")
    assert sg.shortest_circles(sg.module_graph(root)) == []


def test_passes_are_tested_alone():
    """At least a fold, a fusion and a layout pass have unit tests of their
    own (tests/c/test_pass_*.c, run by tests/test_c_units.py) that link the
    pass with model/ alone: no op, encoder or OpenCL source, and the pass
    defines no GOpDesc."""
    tests = sorted((ROOT / "tests" / "c").glob("test_pass_*.c"))
    uses = {t.stem: t.read_text().splitlines()[0].split("uses:", 1)[1].replace("*/", "").split() for t in tests}
    kinds = {"fold": "passes/fold_pad.c", "fusion": "passes/fuse_summed_reduce.c", "layout": "passes/input_direct.c"}
    for kind, source in kinds.items():
        assert any(source in u for u in uses.values()), f"no unit test of a {kind} pass ({source})"
    for test, sources in uses.items():
        below = [s for s in sources if s.split("/")[0] in ("ops", "encode", "cl", "runtime", "vm", "delegate", "api")]
        assert not below, f"{test} links {below}: a pass must build with model/ alone"
        for s in sources:
            assert "GOpDesc" not in (SRC / s).read_text(), f"{s} defines an encoder"
