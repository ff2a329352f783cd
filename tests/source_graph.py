"""The library's source graphs, read for tests/test_source_layers.py (the
layers: delegate_c/LAYERS, every edge down, no circle) and
tests/test_source_layout.py: the C files of delegate_c/ found recursively,
their include graph, their module call graph (by name, from the sources)
and their symbol references (from the built objects), and the Python
package's import graph.

Node names are paths from delegate_c/ ("model/graph.c"); a module is a path
without its suffix ("model/graph": graph.c with graph.h)."""
from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "delegate_c"
KERNEL_ABI = ROOT / "opencl_kernels" / "kernel_abi.h"
# Every walk of delegate_c/ reads at least this many .c and .h files: a walk
# that silently found none (a glob that does not recurse) fails.
MIN_C_FILES = 160


def layers(src: pathlib.Path = SRC) -> list:
    """The layer folders of src/LAYERS, lowest first: the first word of each
    line that is neither blank nor a # comment."""
    return [line.split()[0] for line in (src / "LAYERS").read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def c_files(src: pathlib.Path = SRC) -> list:
    """Every .c and .h file under src, recursively (build folders left out)."""
    return sorted(p for p in src.rglob("*.[ch]")
                  if not any(part.startswith(("build", ".")) for part in p.relative_to(src).parts[:-1]))


def rel(p: pathlib.Path, src: pathlib.Path = SRC) -> str:
    return p.relative_to(src).as_posix()


def layer_of(name: str) -> str:
    """The folder of a path from delegate_c/ ("model/graph.c" -> "model")."""
    return name.split("/", 1)[0] if "/" in name else ""


_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def include_graph(src: pathlib.Path = SRC):
    """({file: [files it includes]}, [unresolved "file: name"]). A quoted
    include is a path from src ("model/graph.h"), a public header by name
    (src/include/), or kernel_abi.h (opencl_kernels/, which every layer may use)."""
    files = {rel(p, src): p for p in c_files(src)}
    edges, unresolved = {}, []
    for name, path in files.items():
        out = set()
        for inc in _INCLUDE.findall(path.read_text(errors="replace")):
            if inc == KERNEL_ABI.name:
                continue
            target = inc if inc in files else f"include/{inc}" if f"include/{inc}" in files else None
            if target is None:
                unresolved.append(f"{name}: {inc}")
            elif target != name:
                out.add(target)
        edges[name] = sorted(out)
    return edges, unresolved


def circles(edges):
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


def describe(circles, edges):
    lines = []
    for comp in circles:
        lines.append(", ".join(sorted(comp)) + ":")
        for a in sorted(comp):
            inside = [b for b in edges[a] if b in comp]
            lines.append(f"  {a} -> {', '.join(inside)}")
    return "\n".join(lines)


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




def module_graph(src: pathlib.Path = SRC, addresses: bool = False):
    """module -> {module it uses: ["file calls name", ...]} for the .c/.h
    files under src.

    A module is a path without its suffix: x.c and x.h of one folder. A .c
    without a header of its own whose functions a header of a module with a
    .c declares (model_view.h's functions defined elsewhere) is part of that
    module: splitting a module's implementation over files does not split
    the module. A module's functions: those its header declares (prototypes,
    static inline functions, function-like macros) and those its .c files
    define. Module A uses B when code inside a function body, a macro or an
    initializer of A's files calls one of B's functions by name, `name(`;
    with addresses, also when it names one without calling it (a function
    pointer stored in a table). A name the file itself defines (a static
    helper) is the file's own.
    """
    files = {rel(p, src): _c_code(p.read_text(errors="replace")) for p in c_files(src)}
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
        body = split[name][1]
        if addresses:  # file-scope initializers without braces too: `T* const k = (T*)fn;`
            body += "\n" + "\n".join(re.findall(r"=([^;{}]*);", split[name][0]))
        body = re.sub(r"(?:\.|->)\s*\w+", " ", body)  # a struct's fields are no names
        pattern = r"\b([A-Za-z_]\w*)\b" if addresses else r"\b([A-Za-z_]\w*)\s*\("
        used = set(re.findall(pattern, body)) - _C_KEYWORDS - funcs[name][1]
        verb = "names" if addresses else "calls"
        for a in modules[name]:
            for f in sorted(used):
                for b in sorted(owners.get(f, ())):
                    if b != a:
                        edges[a].setdefault(b, []).append(f"{name} {verb} {f}")
    return edges


def shortest_circles(edges: dict) -> list:
    """One message per circle of edges ({a: {b: [why, ...]}}): its shortest
    path through its least node first, "a -> b -> a", then why on each step."""
    messages = []
    for comp in sorted(circles({a: sorted(out) for a, out in edges.items()}), key=sorted):
        start = min(comp)
        came_from, queue, path = {start: None}, [start], None
        while queue and not path:  # breadth first: the shortest circle through start
            a = queue.pop(0)
            for b in sorted(edges[a]):
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
        lines += [f"  {a} -> {b}: {'; '.join(list(edges[a][b])[:4])}" for a, b in zip(path, path[1:])]
        if len(comp) > len(path) - 1:
            lines.append(f"  (also on circles with these: {', '.join(sorted(comp - set(path)))})")
        messages.append("\n".join(lines))
    return messages


def upward_edges(src: pathlib.Path = SRC, order=None) -> list:
    """"a -> b: why" for every include, call or named function (an address
    taken) of a file or module in one layer that reaches a later layer of
    order (src/LAYERS), and for every file outside the layers."""
    order = order or layers(src)
    rank = {name: i for i, name in enumerate(order)}
    problems = [f"{name}: not in a layer folder of LAYERS" for name in map(lambda p: rel(p, src), c_files(src))
                if layer_of(name) not in rank]
    includes, unresolved = include_graph(src)
    problems += [f"{u}: an include that is no path from delegate_c/ (nor a public header)" for u in unresolved]
    for a, outs in includes.items():
        for b in outs:
            if layer_of(a) in rank and layer_of(b) in rank and rank[layer_of(b)] > rank[layer_of(a)]:
                problems.append(f"{a} -> {b}: includes a later layer's header")
    for a, outs in module_graph(src, addresses=True).items():
        for b, why in outs.items():
            if layer_of(a) in rank and layer_of(b) in rank and rank[layer_of(b)] > rank[layer_of(a)]:
                problems.append(f"{a} -> {b}: {'; '.join(why[:3])}")
    return sorted(problems)


def object_symbols(objects) -> tuple:
    """({object: symbols it defines}, {object: symbols it references}) from
    nm: every global function and object, called or only addressed."""
    defined, used = {}, {}
    for obj in objects:
        nm = subprocess.run(["nm", "--defined-only", str(obj)], capture_output=True, text=True, check=True).stdout
        defined[obj] = {p[2] for p in map(str.split, nm.splitlines()) if len(p) == 3 and p[1] in "TWDRBVG"}
        und = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True).stdout
        used[obj] = {line.split()[-1] for line in und.splitlines() if line.strip()}
    return defined, used


def build_objects(build: pathlib.Path, src: pathlib.Path = SRC) -> list:
    """Every object of the library built into build/obj (release options): .o paths."""
    make = subprocess.run(["make", "-s", "-C", str(src), f"BUILD={build}", "CFLAGS=-O2", f"PYTHON={sys.executable}",
                           "-j2"], capture_output=True, text=True, timeout=1200)
    assert make.returncode == 0, make.stdout[-3000:] + make.stderr[-3000:]
    # Objects of sources that no longer exist (an older tree's, built here before) are left out.
    return sorted(p for p in (build / "obj").rglob("*.o")
                  if (src / p.relative_to(build / "obj").with_suffix(".c")).is_file())


def python_imports(package: pathlib.Path) -> dict:
    """module -> [package modules it imports] for the .py files of package
    (relative and absolute imports of the package, at any depth of the file)."""
    name = package.name
    mods = {p.stem: p for p in package.glob("*.py")}
    edges = {}
    for mod, path in mods.items():
        out = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level == 1 or base.startswith(name):
                    base = base[len(name) + 1:] if base.startswith(name) else base
                    if base:
                        out.add(base.split(".")[0])
                    else:  # from . import a, b: modules, or names of the package's __init__
                        out.update(a.name if a.name in mods else "__init__" for a in node.names)
            elif isinstance(node, ast.Import):
                out.update(a.name.split(".")[1] for a in node.names if a.name.startswith(name + "."))
        edges[mod] = sorted((out & set(mods)) - {mod})
    return edges
