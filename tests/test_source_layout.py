"""The sources stay small and say the truth about each other:

* no .c, .h, .cl or .py file of LINE_LIMITED_DIRS is over MAX_LINES lines;
* comments name files that exist;
* the version is written once, the Python binding copies no struct, one
  helper reads the environment.

The layers and the graphs between the C files (includes, calls, symbol
references, circles) are tests/test_source_layers.py's."""
from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import pytest

import source_graph

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "delegate_c"
MAX_LINES = 600


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


def test_the_version_is_written_once():
    import tflite_gpu
    from tflite_gpu import _capi

    m = re.search(r'^#define TFLITE_GPU_VERSION "([^"]+)"', (SRC / "include" / "version.h").read_text(), flags=re.M)
    assert m
    assert tflite_gpu.__version__ == m.group(1) == _capi.version()
    assert re.search(r'^dynamic = \["version"\]', (ROOT / "pyproject.toml").read_text(), flags=re.M)
    assert not re.search(r"^version\s*=", (ROOT / "pyproject.toml").read_text(), flags=re.M)
    assert "delegate_c/include/version.h" in (ROOT / "CMakeLists.txt").read_text()
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
    subprocess.run(["gcc", "-std=c99", "-I", str(SRC / "include"), str(prog), "-o", str(exe)], check=True)
    c_layout = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    py_layout = [str(n) for s, f in structs.items() for n in (_capi.ffi.sizeof(s), _capi.ffi.offsetof(s, f))]
    assert c_layout == py_layout


def test_one_helper_reads_the_environment():
    """Every environment variable the library reads goes through
    env_hooks.c (env_flag, env_long, env_text): one parse per kind of value,
    and one place to list them from."""
    files = source_graph.c_files()
    assert len(files) >= source_graph.MIN_C_FILES, len(files)
    readers = [f"{p.name}:{i}" for p in files if p.name != "env_hooks.c"
               for i, line in enumerate(source_graph._c_code(p.read_text()).splitlines(), 1)
               if re.search(r"\bgetenv\s*\(", line)]
    assert not readers, f"getenv outside env_hooks.c: {readers}"


def test_every_variable_read_is_listed_once():
    """The library reads no environment variable its one list
    (util/env_hooks.c kEnvVars: user settings, the policy override, test
    hooks) lacks, and the list names none it never reads."""
    from tflite_gpu import _capi

    listed = [v["name"] for v in _capi.env_vars()]
    assert len(listed) == len(set(listed)), listed
    assert {v["kind"] for v in _capi.env_vars()} == {"user", "override", "test"}
    code = "\n".join(source_graph._c_code(p.read_text()) for p in source_graph.c_files())
    raw = "\n".join(p.read_text() for p in source_graph.c_files())
    read = set(re.findall(r'\benv_(?:flag|long|text)\s*\(\s*"([A-Z0-9_]+)"', raw))
    # The fusion passes' hooks are read through their table's column (passes/fuse.c).
    read |= set(re.findall(r'"(TFLITE_GPU_[A-Z0-9_]+)", -1, ', raw))
    assert "TFLITE_GPU_POLICY" in read and "HOME" in read, read
    assert read <= set(listed), f"read but not listed: {sorted(read - set(listed))}"
    assert set(listed) <= read, f"listed but never read: {sorted(set(listed) - read)}"
    assert not re.search(r"\bgetenv\s*\(", code.replace("getenv(name)", "")), "getenv outside env_text"
