"""The README's exit-code table, row by row: each code is produced by a
real command line, with the kinds the table lists; and the table, the CLI's
--help and errors.KINDS agree."""
from __future__ import annotations

import json
import pathlib
import re

import pytest

from cli_run import run_cli, tiny_conv_model
from tflite_gpu import check, cli, errors, isolate

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def readme_table() -> dict:
    """{exit code: set of kinds} from the README's exit-code table."""
    rows = {}
    for line in README.read_text().splitlines():
        m = re.match(r"^\|\s*(\d)\s*\|([^|]*)\|([^|]+)\|$", line)
        if m:
            rows[int(m.group(1))] = set(re.findall(r"`([a-z-]+)`", m.group(2)))
    return rows


def _conv(tmp_path):
    return tiny_conv_model(tmp_path / "conv.tflite")


def _kind(p):
    doc = json.loads(p.stdout)
    return doc["error"]["kind"] if isinstance(doc, dict) else None


def test_table_matches_the_code():
    table = readme_table()
    assert sorted(table) == [0, 1, 2, 3, 4, 5]
    for kind, code in errors.KINDS.items():
        assert kind in table[code], f"README: kind {kind} missing from the row of exit code {code}"
    assert set().union(*table.values()) == set(errors.KINDS)
    epilog = run_cli("--help").stdout
    for code in table:
        assert f"{code} " in epilog


def test_row_0_success(tmp_path):
    p = run_cli("check", _conv(tmp_path), "--json")
    assert p.returncode == 0 and _kind(p) is None


def test_row_1_check_failed(tmp_path, capsys, monkeypatch):
    def off_by_one_percent(job, args, on_message=None):
        d = check.isolated_check(**args)
        for o in d["outputs"]:
            o["rel_l2"], o["max_abs"] = 1e-2, 1.0
        return d

    monkeypatch.setattr(isolate, "run", off_by_one_percent)
    assert cli.main(["check", str(_conv(tmp_path)), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)[0]["verdict"] == "FAIL"


@pytest.mark.parametrize("args", [["bench", "m.tflite", "--threads", "-3", "--json", "-"],
                                  ["check", "x.tflite", "--opt", "no_such_key=1", "--json"],
                                  ["models", "nosuch", "--json"]])
def test_row_2_usage(args, tmp_path):
    if args[1].endswith(".tflite"):
        args = [args[0], _conv(tmp_path)] + args[2:]
    p = run_cli(*args)
    assert p.returncode == 2 and _kind(p) == "usage", p.stderr


def test_row_3_no_opencl(tmp_path):
    p = run_cli("check", _conv(tmp_path), "--json", env={"OCL_ICD_VENDORS": str(tmp_path)})
    assert p.returncode == 3 and _kind(p) == "no-opencl", p.stderr
    p = run_cli("ops", "--json", env={"TFLITE_GPU_LIBRARY": str(tmp_path / "absent.so")})
    assert p.returncode == 3 and _kind(p) == "no-library", p.stderr


def test_row_4_model(tmp_path):
    p = run_cli("check", "nosuch", "--json")
    assert p.returncode == 4 and _kind(p) == "model"
    (tmp_path / "empty.tflite").write_bytes(b"")
    p = run_cli("explain", tmp_path / "empty.tflite", "--json")
    assert p.returncode == 4 and _kind(p) == "model" and "empty.tflite" in p.stderr


@pytest.mark.parametrize("phase,kind", [("delegate", "delegate-crashed"), ("cpu", "cpu-crashed")])
def test_row_5_and_4_crashes(phase, kind, tmp_path, capsys, monkeypatch):
    def crash(job, args, on_message=None):
        raise isolate.Crashed(phase, -11)

    monkeypatch.setattr(isolate, "run", crash)
    code = cli.main(["check", str(_conv(tmp_path)), "--json"])
    err = json.loads(capsys.readouterr().out)["error"]
    assert err["kind"] == kind and code == err["exit_code"] == errors.KINDS[kind]
    assert "SIGSEGV" in err["message"] and "conv.tflite" in err["message"]


def test_row_5_internal_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "_resolve_model", lambda name: 1 / 0)
    assert cli.main(["explain", "anything", "--json"]) == 5
    err = json.loads(capsys.readouterr().out)["error"]
    assert err["kind"] == "internal" and "ZeroDivisionError" in err["message"] and "bug" in err["message"]
