"""Hostile option strings through tflite_gpu.load_delegate (issue 13).

The runtime's load_delegate turns every value into text with str() and
hands it to the library as a C string, so:
- a bytes path (b'/tmp') arrives as the text "b'/tmp'": the library refuses
  it for a path option, saying what happened;
- a huge value is echoed in the error cut to 80 characters with its length;
- control characters are escaped in the message.
- an embedded NUL would cut the C string short before the library sees it,
  so tflite_gpu.load_delegate refuses 'info\\x00silent' itself."""
from __future__ import annotations

import pytest

import tflite_gpu


def _error(**options):
    with pytest.raises(ValueError) as e:
        tflite_gpu.load_delegate(**options)
    return str(e.value)


@pytest.mark.parametrize("value", [b"/tmp", "b'/tmp'", 'b"/tmp"'])
def test_bytes_repr_path_is_refused(value):
    msg = _error(serialization_dir=value, model_token="t")
    assert "serialization_dir=b" in msg and "looks like a Python bytes object" in msg, msg


def test_bytes_repr_path_alias_is_refused():
    assert "looks like a Python bytes object" in _error(delegate_serialize_dir=b"/tmp")


def test_path_that_only_contains_quotes_is_accepted(tmp_path):
    d = tmp_path / "b'cache'"
    d.mkdir(mode=0o700)
    tflite_gpu.load_delegate(serialization_dir=str(d), model_token="t", log_level="silent")


@pytest.mark.parametrize("key", ["log_level", "device", "inference_priority1", "no_such_option"])
def test_huge_value_is_not_echoed_whole(key):
    msg = _error(**{key: "v" * (1 << 20)})
    assert "... (1048576 bytes)" in msg, msg[:500]
    assert len(msg) < 1000, len(msg)


def test_huge_key_is_not_echoed_whole():
    msg = _error(**{"k" * 100000: "1"})
    assert "unknown option 'kkkk" in msg and "... (100000 bytes)" in msg and len(msg) < 1000, msg[:500]


def test_huge_path_is_refused_with_its_length():
    msg = _error(serialization_dir="/" + "d" * 70000)
    assert "serialization_dir is 70001 bytes long; a path holds at most" in msg and len(msg) < 1000, msg[:500]


def test_control_characters_are_escaped():
    msg = _error(log_level="info\nsilent")
    assert "'info\\x0asilent'" in msg and "info\nsilent" not in msg, msg


@pytest.mark.parametrize("key,value", [("log_level", "info\x00silent"), ("device\x00x", "0"),
                                       ("serialization_dir", "/tmp\x00/etc")])
def test_nul_in_option_is_refused(key, value):
    msg = _error(**{key: value})
    assert "NUL" in msg, msg
