"""benchmark_model's --external_delegate_options: the strings the docs show
and the benchmark tool's own GPU flag names reach tflite_plugin_create_delegate
the way the tool passes them, and every key is accepted."""
import ctypes
import pathlib
import re

import pytest

import tflite_gpu

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
REPORT = ctypes.CFUNCTYPE(None, ctypes.c_char_p)


def tool_split(text):
    """What TFLite's external delegate provider does: split at ';', then each
    option at ':'; a pair that is not exactly two parts is dropped."""
    pairs, dropped = [], []
    for option in text.split(";"):
        parts = option.split(":")
        (pairs if len(parts) == 2 else dropped).append(tuple(parts) if len(parts) == 2 else option)
    return pairs, dropped


def create(pairs):
    lib = ctypes.CDLL(tflite_gpu.library_path())
    lib.tflite_plugin_create_delegate.restype = ctypes.c_void_p
    lib.tflite_plugin_create_delegate.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p),
                                                  ctypes.c_size_t, REPORT]
    lib.tflite_plugin_destroy_delegate.argtypes = [ctypes.c_void_p]
    keys = (ctypes.c_char_p * len(pairs))(*[k.encode() for k, _ in pairs])
    values = (ctypes.c_char_p * len(pairs))(*[v.encode() for _, v in pairs])
    errors = []
    report = REPORT(lambda msg: errors.append(msg.decode()))
    d = lib.tflite_plugin_create_delegate(keys, values, len(pairs), report)
    if d:
        lib.tflite_plugin_destroy_delegate(d)
    return bool(d), errors


def documented_strings():
    found = []
    for doc in DOCS:
        for m in re.finditer(r'--external_delegate_options="([^"]*)"', doc.read_text()):
            if "key:value" not in m.group(1):  # the format description itself
                found.append(pytest.param(m.group(1), id=f"{doc.name}:{m.group(1)[:40]}"))
    return found


def test_docs_show_the_command():
    assert len(documented_strings()) >= 2


@pytest.mark.parametrize("text", documented_strings())
def test_documented_strings_are_accepted(text):
    pairs, dropped = tool_split(text)
    assert not dropped, f"benchmark_model would silently drop {dropped}"
    ok, errors = create([(k, v) for k, v in pairs if k != "log_level"] + [("log_level", "silent")])
    assert ok, errors


# benchmark_model's GPU delegate provider flags and common delegate params,
# spelled as users carry them over into --external_delegate_options.
TOOL_FLAGS = ("gpu_precision_loss_allowed:true;gpu_experimental_enable_quant:false;gpu_backend:cl;"
              "gpu_inference_for_sustained_speed:true;max_delegated_partitions:2;"
              "delegate_serialize_dir:/tmp;delegate_serialize_token:tok;log_level:silent")


def test_benchmark_tool_flag_names_are_accepted():
    pairs, dropped = tool_split(TOOL_FLAGS)
    assert not dropped
    ok, errors = create(pairs)
    assert ok, errors


def test_unknown_key_is_refused_with_its_name():
    ok, errors = create(tool_split("gpu_precision_loss_alowed:true")[0])
    assert not ok
    assert errors and "gpu_precision_loss_alowed" in errors[0]
