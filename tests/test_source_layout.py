"""The C sources stay small and layered:

* no .c, .h, .cl or .py file of LINE_LIMITED_DIRS is over MAX_LINES lines;
* the file-level include graph (#include "..." between delegate_c/ and
  opencl_kernels/kernel_abi.h) has no circle;
* the file-level call graph has no circle: every object of the library is
  built (into build-layout/), and file A calls file B when A's machine code
  has a call or tail-call relocation (R_X86_64_PLT32; R_AARCH64_CALL26 or
  JUMP26) to a function that B defines. Addresses stored rather than called
  (the op table's check/lower pointers, the TfLiteRegistration callbacks,
  the embedded kernel sources) are not calls: `nm`'s undefined symbols
  would count them, and would make every table a circle with what it lists.
"""
from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "delegate_c"
BUILD = ROOT / "build-layout"
MAX_LINES = 600
CALL_RELOCATIONS = {"R_X86_64_PLT32", "R_AARCH64_CALL26", "R_AARCH64_JUMP26"}



def _circles(edges):
    """The strongly connected sets of more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(edges) + 100))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(frozenset(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _describe(circles, edges):
    lines = []
    for comp in circles:
        lines.append(", ".join(sorted(comp)) + ":")
        for a in sorted(comp):
            inside = [b for b in edges[a] if b in comp]
            lines.append(f"  {a} -> {', '.join(inside)}")
    return "\n".join(lines)


def test_no_source_file_over_the_line_limit():
    long = files_over_the_line_limit()
    assert not long, f"over {MAX_LINES} lines (split them by job): {long}"


LINE_LIMITED_DIRS = ("delegate_c", "opencl_kernels", "python")
SOURCE_SUFFIXES = (".c", ".h", ".cl", ".py")


def _files(folder: pathlib.Path):
    """Every file under folder, less build output, caches and hidden folders."""
    for p in sorted(folder.iterdir()) if folder.is_dir() else ():
        if not p.is_dir():
            yield p
        elif not (p.name.startswith((".", "build")) or p.name == "__pycache__" or p.name.endswith(".egg-info")):
            yield from _files(p)


def _source_files(root: pathlib.Path, dirs, suffixes=SOURCE_SUFFIXES) -> list:
    """The files with one of `suffixes` under each of root's dirs."""
    return [p for d in dirs for p in _files(root / d) if p.suffix in suffixes]


def files_over_the_line_limit(root: pathlib.Path = ROOT, limit: int = MAX_LINES) -> dict:
    """{path from root: lines} of each source file of LINE_LIMITED_DIRS over `limit` lines."""
    return {p.relative_to(root).as_posix(): n for p in _source_files(root, LINE_LIMITED_DIRS)
            if (n := len(p.read_text(errors="replace").splitlines())) > limit}


def test_the_line_limit_catches_a_601_line_kernel_file(tmp_path):
    for d in LINE_LIMITED_DIRS:
        (tmp_path / d).mkdir()
    (tmp_path / "opencl_kernels" / "long.cl").write_text("/* x */\n" * (MAX_LINES + 1))
    (tmp_path / "opencl_kernels" / "full.cl").write_text("/* x */\n" * MAX_LINES)
    (tmp_path / "python" / "pkg").mkdir()
    (tmp_path / "python" / "pkg" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "python" / "pkg" / "notes.txt").write_text("x\n" * (MAX_LINES + 1))
    assert files_over_the_line_limit(tmp_path) == {"opencl_kernels/long.cl": MAX_LINES + 1,
                                                   "python/pkg/long.py": MAX_LINES + 1}


# Comments that name a file name one that exists: the folders whose
# comments are read (.c, .h, .cl, .py and shell scripts), and the names
# they may cite though no file here has them, with why.
COMMENTED_DIRS = ("delegate_c", "opencl_kernels", "python", "tools", "tests")
NAMED_ELSEWHERE = {
    "kernels_embedded.c": "generated into the build folder by tools/embed_kernels.py",
    "vm_program.cl": "generated into the library by tools/gen_vm.py (the VM program)",
    "builtin_ops.h": "TensorFlow Lite's, whose codes tflite_builtins.h copies",
    "builtin_op_data.h": "TensorFlow Lite's, whose structs tflite_builtins.h copies",
    "delegate_options.h": "TensorFlow Lite's, whose option struct gpu_delegate.h keeps",
    "prelu.h": "TensorFlow Lite's reference kernel, which int8_exact.cl follows",
    "flexbuffers.h": "FlatBuffers', whose value types flexbuffer.h reads",
    **dict.fromkeys(["a.c", "b.c", "a.cl", "b.cl", "file.c", "OUTPUT.c", "KERNEL.cl", "input.cl", "x.c", "x.h", "B.h"],
                    "a placeholder in a usage line, a format or a rule"),
}
_FILE_NAME = re.compile(r"(?<![\w.$/-])((?:[\w.-]+/)*[A-Za-z_][\w-]*\.(?:c|h|cl|py))(?!\w)")
_C_TOKEN = re.compile(r"""/\*.*?(?:\*/|\Z)|//[^\n]*|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?""", re.S)


def _c_comments(text: str):
    """(line, text) of each /* */ and // comment; string and character
    literals are skipped."""
    line, at = 1, 0
    for m in _C_TOKEN.finditer(text):
        line += text.count("\n", at, m.start())
        at = m.start()
        if m.group().startswith("/"):
            yield line, m.group()


def _py_comments(text: str):
    """(line, text) of each # comment and of each docstring of the module,
    its classes and its functions."""
    import ast  # only this check reads Python's syntax
    import io
    import tokenize

    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    scopes = [ast.parse(text)]
    while scopes:
        body = scopes.pop().body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
                isinstance(body[0].value.value, str):
            yield body[0].lineno, body[0].value.value
        scopes += [s for s in body if isinstance(s, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]


def _sh_comments(text: str):
    """(line, text) of each whole-line # comment but the #! line."""
    for n, s in enumerate(text.splitlines(), 1):
        if s.lstrip().startswith("#") and not s.startswith("#!"):
            yield n, s


def stale_file_names(root: pathlib.Path = ROOT, dirs=COMMENTED_DIRS) -> list:
    """'path:line: name' for each file name that a comment under root's dirs
    cites and no file has: a bare name no file of the tree bears (nor
    NAMED_ELSEWHERE), or a path from one of root's folders that is not there."""
    names = {p.name for p in _files(root)}
    tops = {p.name for p in root.iterdir() if p.is_dir()}
    readers = {".py": _py_comments, ".sh": _sh_comments}
    stale = []
    for path in _source_files(root, dirs, SOURCE_SUFFIXES + (".sh",)):
        for line, comment in readers.get(path.suffix, _c_comments)(path.read_text(errors="replace")):
            for m in _FILE_NAME.finditer(comment):
                cited = pathlib.PurePosixPath(m.group(1))
                if cited.parts[0] in tops and len(cited.parts) > 1:
                    missing = not (root / cited).is_file()
                else:
                    missing = cited.name not in names and cited.name not in NAMED_ELSEWHERE
                if missing:
                    at = line + comment.count("\n", 0, m.start())
                    stale.append(f"{path.relative_to(root).as_posix()}:{at}: {cited}")
    return stale


def test_comments_name_files_that_exist():
    stale = stale_file_names()
    assert not stale, "comments that name no file (rename, or say where it went):\n" + "\n".join(stale)


def test_the_file_name_check_catches_a_bogus_name(tmp_path):
    for d in ("delegate_c", "python/pkg", "tools"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "delegate_c" / "fuse.c").write_text(
        "/* Scales: fuse_channel_scale.c; see fuse.c and\n * kernels_embedded.c. */\n"
        'static const char* k = "in_a_string.c"; // and tools/gone.py\n'
        "/* delegate_c/fuse.c is here, tools/fuse.c is not */\n")
    (tmp_path / "python" / "pkg" / "m.py").write_text(
        '"""Reads\nmissing_module.py."""\nNAME = "string_only.py"  # after fuse.c, before no_such.h\n')
    (tmp_path / "tools" / "run.sh").write_text("#!/bin/sh\n# runs absent.py\necho x.cl\n")
    assert sorted(stale_file_names(tmp_path, ("delegate_c", "python", "tools"))) == [
        "delegate_c/fuse.c:1: fuse_channel_scale.c", "delegate_c/fuse.c:3: tools/gone.py",
        "delegate_c/fuse.c:4: tools/fuse.c", "python/pkg/m.py:2: missing_module.py", "python/pkg/m.py:3: no_such.h",
        "tools/run.sh:2: absent.py"]


def test_no_circle_in_the_include_graph():
    files = {p.name: p for p in [*SRC.glob("*.c"), *SRC.glob("*.h"), ROOT / "opencl_kernels" / "kernel_abi.h"]}
    edges = {}
    for name, path in files.items():
        included = re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), flags=re.M)
        edges[name] = sorted({pathlib.Path(i).name for i in included} & set(files) - {name})
    circles = _circles(edges)
    assert not circles, "include circles:\n" + _describe(circles, edges)


def _call_graph():
    """file.c -> the files whose functions its code calls."""
    # The release optimisation (warnings differ at -O0 and fail -Werror), no debug info.
    make = subprocess.run(["make", "-s", "-C", str(SRC), f"BUILD={BUILD}", "CFLAGS=-O2", f"PYTHON={sys.executable}",
                           "-j2"], capture_output=True, text=True, timeout=1200)
    assert make.returncode == 0, make.stdout[-3000:] + make.stderr[-3000:]
    objects = sorted((BUILD / "obj").glob("*.o"))
    assert len(objects) >= 40, objects
    defined, calls = {}, {}
    for obj in objects:
        name = obj.stem + ".c"
        nm = subprocess.run(["nm", "--defined-only", str(obj)], capture_output=True, text=True, check=True).stdout
        defined[name] = {p[2] for p in map(str.split, nm.splitlines()) if len(p) == 3 and p[1] in "TW"}
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
        calls[name] = called
    owner = {sym: f for f, syms in defined.items() for sym in syms}
    edges = {f: sorted({owner[s] for s in called if s in owner} - {f}) for f, called in calls.items()}
    return edges


@pytest.mark.skipif(shutil.which("readelf") is None or shutil.which("nm") is None,
                    reason="needs binutils (tools/setup.sh installs them)")
def test_no_circle_in_the_call_graph():
    edges = _call_graph()
    # The graph is real: the delegate's layers call down.
    assert "partition_kernel.c" in edges["delegate.c"] and "delegate.c" in edges["c_api.c"], edges
    # The op files call the helpers (op_helpers.c); the registry calls no op file.
    assert "op_helpers.c" in edges["ops_conv.c"] and not any(f.startswith("ops_") for f in edges["op_table.c"]), edges
    circles = sorted(_circles(edges), key=sorted)
    assert not circles, "call circles between files:\n" + _describe(circles, edges)


# Circles between modules (issue 35). A module is a .c/.h pair of one stem
# (x.c + x.h); the file graphs above cannot see a circle that a module's
# files share, e.g. a module split over x.c and a helper file.

# (a, b): a call edge from module a into module b left out of the check,
# with the reason. Each entry must still close a circle (a stale entry fails).
ALLOWED_MODULE_EDGES: dict[tuple[str, str], str] = {}

_C_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "_Alignof", "_Static_assert",
               "__attribute__", "__typeof__", "typeof", "_Generic", "do", "else", "case"}
_C_FUNCTION = re.compile(r"([^;{}]*?)\b([A-Za-z_]\w*)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*"
                         r"(?:__attribute__\s*\(\(.*?\)\)\s*)?(\{|;)")


def _c_code(text):
    """The text with comments blanked (their newlines kept) and string and char literals emptied."""
    def blank(m):
        s = m.group(0)
        return ("\n" * s.count("\n") or " ") if s[0] == "/" else s[0] * 2
    return re.sub(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", blank, text, flags=re.S)


def _c_split(code):
    """(top level with every brace's inside blanked, the code inside braces plus the macro bodies);
    preprocessor lines removed and a header's extern "C" block read as top level."""
    code = re.sub(r'extern\s*""\s*\{', " ", code)
    code = re.sub(r"(#\s*ifdef\s+__cplusplus\s*\n)\s*\}", r"\1", code)
    macros = re.findall(r"^[ \t]*#[ \t]*define[ \t]+\w+(?:\([^)]*\))?((?:[^\n]*\\\n)*[^\n]*)", code, flags=re.M)
    code = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", code, flags=re.M)
    top, inside, depth = [], [], 0
    for ch in code:
        if ch == "{":
            depth += 1
            (top if depth == 1 else inside).append(ch)
        elif ch == "}":
            if depth <= 1:
                top.append(ch)
                inside.append("\n")  # one body's last name stays apart from the next body's first
            else:
                inside.append(ch)
            depth = max(depth - 1, 0)
        else:
            (inside if depth else top).append(ch)
    return "".join(top), "".join(inside) + "\n" + "\n".join(macros)


def _c_functions(top, header):
    """Functions a header declares or defines (static inline ones too), or that a .c defines:
    (exported, every one). A .c's static functions are not exported but shadow other files'."""
    exported, every = set(), set()
    for m in _C_FUNCTION.finditer(top):
        before, name, _, end = m.groups()
        if name in _C_KEYWORDS or "typedef" in before.split() or "=" in before or "(" in before:
            continue
        if header or end == "{":
            every.add(name)
            if header or "static" not in before.split():
                exported.add(name)
    return exported, every


def _module_graph(src):
    """module -> {module it calls: ["file calls name", ...]} for the .c/.h files in src.

    A module is a stem: x.c and x.h. A .c without a header of its own whose
    functions a header of a module with a .c declares (model_view.h's
    functions defined elsewhere) is part of that module: splitting a
    module's implementation over files does not split the module. A
    module's functions: those its header declares (prototypes, static
    inline functions, function-like macros) and those its .c files define.
    Module A depends on B when code inside a function body (or a macro) of
    A's files calls one of B's functions by name, `name(`; a name the file
    itself defines (a static helper) is the file's own.
    """
    files = {p.name: _c_code(p.read_text(errors="replace")) for p in sorted([*src.glob("*.c"), *src.glob("*.h")])}
    split = {name: _c_split(code) for name, code in files.items()}
    funcs = {name: _c_functions(split[name][0], name.endswith(".h")) for name in files}
    for name, code in files.items():
        if name.endswith(".h"):
            macros = set(re.findall(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(", code, flags=re.M))
            funcs[name] = (funcs[name][0] | macros, funcs[name][1] | macros)
    declared = {}
    for name, (exported, _) in funcs.items():
        if name.endswith(".h") and name[:-2] + ".c" in files:
            for f in exported:
                declared.setdefault(f, set()).add(name[:-2])
    modules = {}
    for name in files:
        stem = name.rsplit(".", 1)[0]
        hosts = set()
        if name.endswith(".c") and stem + ".h" not in files:
            hosts = {m for f in funcs[name][0] for m in declared.get(f, ()) if m != stem}
        modules[name] = sorted(hosts) or [stem]
    owners = {}
    for name, (exported, _) in funcs.items():
        for f in exported:
            owners.setdefault(f, set()).update(modules[name])
    edges = {m: {} for ms in modules.values() for m in ms}
    for name in files:
        body = re.sub(r"(?:\.|->)\s*\w+", " ", split[name][1])  # calls through a struct's pointer are no names
        called = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", body)) - _C_KEYWORDS - funcs[name][1]
        for a in modules[name]:
            for f in sorted(called):
                for b in sorted(owners.get(f, ())):
                    if b != a:
                        edges[a].setdefault(b, []).append(f"{name} calls {f}")
    return edges


def _module_circles(src, allowed):
    """(one message per circle, its path first: "a -> b -> a", then the calls on each step;
    the allowed edges that close no circle any more)."""
    edges = _module_graph(src)
    kept = {a: {b: why for b, why in out.items() if (a, b) not in allowed} for a, out in edges.items()}
    messages = []
    for comp in sorted(_circles({a: sorted(out) for a, out in kept.items()}), key=sorted):
        start = min(comp)
        came_from, queue, path = {start: None}, [start], None
        while queue and not path:  # breadth first: the shortest circle through start
            a = queue.pop(0)
            for b in sorted(kept[a]):
                if b == start:
                    back = [a]
                    while came_from[back[-1]] is not None:
                        back.append(came_from[back[-1]])
                    path = back[::-1] + [start]
                    break
                if b in comp and b not in came_from:
                    came_from[b] = a
                    queue.append(b)
        lines = [" -> ".join(path)]
        lines += [f"  {a} -> {b}: {'; '.join(kept[a][b][:4])}" for a, b in zip(path, path[1:])]
        if len(comp) > len(path) - 1:
            lines.append(f"  (also on circles with these: {', '.join(sorted(comp - set(path)))})")
        messages.append("\n".join(lines))
    full = {comp_node: comp for comp in _circles({a: sorted(out) for a, out in edges.items()}) for comp_node in comp}
    stale = sorted((a, b) for a, b in allowed if b not in edges.get(a, {}) or b not in full.get(a, ()))
    return messages, stale


def test_no_circle_between_modules():
    """No circle between modules, directly or through others (A calls B, B calls A).

    The rule (_module_graph): a module is x.c with x.h; a .c without a
    header of its own that defines functions a module's header declares
    belongs to that module (model_view.h's accessors may not move to a
    separate file to hide a call back). Module A depends on module B when
    code in A's function bodies or macros calls a function B declares or
    defines (static inline functions and function-like macros of B.h
    included). Including B.h for its types, enum values or constants is no
    dependency: the include graph is checked per file above, and a table
    of addresses (the op table's check/lower pointers) or a callback
    stored, not called, is no call. Header-only modules (selectors.h, the
    public gpu_delegate*.h) own what they declare, together with the file
    that defines it. An edge in ALLOWED_MODULE_EDGES is left out, with its
    reason, only while it still closes a circle.
    """
    edges = _module_graph(SRC)
    # The graph is real: folded constants have one owner above the view.
    assert "model_view" in edges["int_fold"] and {"int_fold", "model_view"} <= set(edges["const_fold"]), edges
    assert "int_fold" not in edges["model_view"] and "const_fold" not in edges["model_view"], edges["model_view"]
    assert "op_helpers" in edges["ops_reduce"] and "partition" in edges["delegate"], edges
    circles, stale = _module_circles(SRC, ALLOWED_MODULE_EDGES)
    assert not circles, "circles between modules:\n" + "\n".join(circles)
    assert not stale, f"allowed edges that close no circle any more (remove them): {stale}"


def test_the_module_check_catches_a_reintroduced_circle(tmp_path):
    """The check on copies of delegate_c/ with a call put back from the view into int_fold."""
    def tree(name, **changes):
        root = tmp_path / name
        shutil.copytree(SRC, root, ignore=shutil.ignore_patterns("*.o", "*.so"))
        for file, text in changes.items():
            path = root / file.replace("__", ".")
            path.write_text((path.read_text() if path.exists() else "") + text)
        return root

    assert _module_circles(tree("clean"), {}) == ([], [])
    call_back = '\nint mv_folds(const ModelView* mv, int t) { return int_fold_is_output(mv, t); }\n'
    direct = tree("direct", model_view__c='#include "int_fold.h"\n' + call_back)
    circles, _ = _module_circles(direct, {})
    assert len(circles) == 1 and circles[0].startswith("int_fold -> model_view -> int_fold\n"), circles
    assert "model_view.c calls int_fold_is_output" in circles[0], circles
    # The same call from a file of its own that implements model_view.h is still the view's.
    hidden = tree("hidden", model_view__h="int mv_folds(const ModelView* mv, int t);\n",
                  model_fold_access__c='#include "int_fold.h"\n' + call_back)
    circles, _ = _module_circles(hidden, {})
    assert [c.splitlines()[0] for c in circles] == ["int_fold -> model_view -> int_fold"], circles
    assert "model_fold_access.c calls int_fold_is_output" in circles[0], circles
    # Through others: int_fold -> model_view -> sparse_densify -> int_fold.
    longer = tree("longer", sparse_densify__c='#include "int_fold.h"\nint densify_folds(const ModelView* mv, int t)'
                  ' { return int_fold_is_output(mv, t); }\n')
    circles, _ = _module_circles(longer, {})
    assert [c.splitlines()[0] for c in circles] == ["int_fold -> model_view -> sparse_densify -> int_fold"], circles
    # Types, values and a stored address are no calls.
    types = tree("types", model_view__c='#include "int_fold.h"\nstatic int (*const kFolds)(const ModelView*, int) = '
                 'int_fold_is_output;\nint mv_fold_max(void) { return INT_FOLD_MAX + (kFolds != 0); }\n')
    assert _module_circles(types, {}) == ([], [])
    # The allow-list: an allowed edge breaks the circle, and goes stale once the circle is gone.
    allowed = {("model_view", "int_fold"): "a test"}
    assert _module_circles(direct, allowed) == ([], [])
    assert _module_circles(tree("clean2"), allowed) == ([], [("model_view", "int_fold")])


def test_the_version_is_written_once():
    import tflite_gpu
    from tflite_gpu import _capi

    m = re.search(r'^#define TFLITE_GPU_VERSION "([^"]+)"', (SRC / "version.h").read_text(), flags=re.M)
    assert m
    assert tflite_gpu.__version__ == m.group(1) == _capi.version()
    assert re.search(r'^dynamic = \["version"\]', (ROOT / "pyproject.toml").read_text(), flags=re.M)
    assert not re.search(r"^version\s*=", (ROOT / "pyproject.toml").read_text(), flags=re.M)
    assert "delegate_c/version.h" in (ROOT / "CMakeLists.txt").read_text()
    others = [p.name for p in SRC.glob("*.[ch]") if p.name != "version.h" and m.group(1) in p.read_text()]
    assert not others, others


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_python_binding_takes_its_declarations_from_the_headers(tmp_path):
    """_capi.py copies no struct: cffi's layouts are the C compiler's."""
    from tflite_gpu import _capi

    source = (ROOT / "python" / "tflite_gpu" / "_capi.py").read_text()
    assert "typedef" not in source and "int32_t" not in source
    structs = {"TfLiteGpuDelegateOptionsV2": "model_token", "TfLiteGpuDelegateReport": "cache_rejected",
               "TfLiteGpuDebugCounters": "fault_injection"}
    prog = tmp_path / "layout.c"
    prog.write_text('#include <stddef.h>\n#include <stdio.h>\n#include "gpu_delegate_introspection.h"\n'
                    "int main(void) {\n" + "".join(
                        f'  printf("%zu %zu\\n", sizeof({s}), offsetof({s}, {f}));\n' for s, f in structs.items())
                    + "  return 0;\n}\n")
    exe = tmp_path / "layout"
    subprocess.run(["gcc", "-std=c99", "-I", str(SRC), str(prog), "-o", str(exe)], check=True)
    c_layout = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    py_layout = [str(n) for s, f in structs.items() for n in (_capi.ffi.sizeof(s), _capi.ffi.offsetof(s, f))]
    assert c_layout == py_layout


def test_one_helper_reads_the_environment():
    """Every environment variable the library reads goes through
    env_hooks.c (env_flag, env_long, env_text): one parse per kind of value,
    and one place to list them from."""
    readers = [f"{p.name}:{i}" for p in sorted((ROOT / "delegate_c").glob("*.[ch]")) if p.name != "env_hooks.c"
               for i, line in enumerate(_c_code(p.read_text()).splitlines(), 1) if re.search(r"\bgetenv\s*\(", line)]
    assert not readers, f"getenv outside env_hooks.c: {readers}"
