"""`tflite-gpu check` finds the wrong op (issue 37): many invokes on varied
inputs catch a result that depends on an earlier invoke, and --bisect names
the first node whose output differs, or the fused launch that hid it.

Two test hooks make the delegate wrong on purpose (read when a partition is
built): TFLITE_GPU_TEST_PERTURB_NODE=K adds 1.0 to what the launch computing
TFLite node K writes; TFLITE_GPU_TEST_STALE_INPUTS=1 writes the inputs on
the first invoke only, so later invokes compute on the first one's data."""
import numpy as np
import pytest

from cli_run import run_cli, strict_json
from tflite_gpu import check, models
from tflite_gpu.model_builder import ModelBuilder


def _chain_model(path):
    """x [1, 13, 11, 5] -> CONV_2D 3x3 (5 -> 17) -> TANH -> MUL by a constant -> ADD x2 of itself: a
    chain whose nodes the CPU set runs one launch each; written to path."""
    rng = np.random.default_rng(11)
    mb = ModelBuilder()
    x = mb.add_input([1, 13, 11, 5])
    w = mb.add_tensor([17, 3, 3, 5], data=(rng.standard_normal([17, 3, 3, 5]) * 0.3).astype(np.float32))
    b = mb.add_tensor([17], data=rng.standard_normal([17]).astype(np.float32))
    c = mb.add_tensor([1, 1, 1, 17], data=rng.uniform(0.5, 1.5, [1, 1, 1, 17]).astype(np.float32))
    t = [mb.add_tensor([1, 13, 11, 17]) for _ in range(4)]
    mb.add_op("CONV_2D", [x, w, b], [t[0]], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="NONE"))
    mb.add_op("TANH", [t[0]], [t[1]])
    mb.add_op("MUL", [t[1], c], [t[2]], dict(fused_activation="NONE"))
    mb.add_op("ADD", [t[2], t[2]], [t[3]], dict(fused_activation="NONE"))
    mb.mark_output(t[3])
    path.write_bytes(mb.build())
    return path


def _answer(result):
    """(the node bisect names, the TFLite nodes of the launch that computed it)."""
    first = result.bisect["first"]
    assert first is not None, result.bisect
    return first["node"], (first.get("group") or {}).get("members", [])


CASES = [  # (model, node K to perturb): a first conv, a mid-model op, a small chain's middle node
    ("face_detection_short_range", 2),
    ("hand_recrop", 40),
    ("chain", 2),
]


@pytest.mark.parametrize("kernel_set", ["cpu", "gpu"])
@pytest.mark.parametrize("name,k", CASES, ids=[c[0] for c in CASES])
def test_bisect_names_the_perturbed_node_or_its_launch(tmp_path, monkeypatch, name, k, kernel_set):
    path = _chain_model(tmp_path / "chain.tflite") if name == "chain" else models.fetch_models([name],
                                                                                              progress=False)[name]
    monkeypatch.setenv("TFLITE_GPU_TEST_PERTURB_NODE", str(k))
    r = check.check_model(path, {"kernel_set": kernel_set, "log_level": "silent"}, invokes=1, bisect=True)
    assert not r.passed
    node, members = _answer(r)
    # K itself, or a node of the launch that computes K (fusion may hide K's own output).
    assert node == k or k in members, (node, members, r.bisect)
    if node != k:
        assert k in r.bisect["first"]["hidden"], r.bisect


def test_bisect_is_not_run_when_the_outputs_agree(tmp_path):
    r = check.check_model(_chain_model(tmp_path / "c.tflite"), {"log_level": "silent"}, bisect=True)
    assert r.passed and r.bisect == {"nothing_to_find": "every output agreed with the reference on every invoke"}
    assert check.check_model(tmp_path / "c.tflite", {"log_level": "silent"}).bisect is None  # not asked


def test_bisect_of_a_passing_model_says_it_had_nothing_to_find(tmp_path):
    """One line in the text, the same answer in the JSON."""
    path = _chain_model(tmp_path / "c.tflite")
    text = run_cli("check", path, "--bisect", "--invokes", "1")
    assert text.returncode == 0, text.stderr
    lines = [ln for ln in text.stdout.splitlines() if ln.startswith("bisect")]
    assert lines == ["bisect: nothing to find (every output agreed with the reference on every invoke)"], text.stdout
    p = run_cli("check", path, "--bisect", "--invokes", "1", "--json")
    (row,) = strict_json(p.stdout)
    assert p.returncode == 0 and row["bisect"] == {"nothing_to_find": lines[0][len("bisect: nothing to find ("):-1]}


def test_many_invokes_catch_a_stale_input_that_one_invoke_misses(tmp_path, monkeypatch):
    """The LiteRT 8065 shape: only the first invoke is right, later ones
    ignore their input. One invoke passes; three show invokes 2 and 3 with
    the first invoke's outputs."""
    monkeypatch.setenv("TFLITE_GPU_TEST_STALE_INPUTS", "1")
    path = _chain_model(tmp_path / "c.tflite")
    assert check.check_model(path, {"log_level": "silent"}, invokes=1).passed
    r = check.check_model(path, {"log_level": "silent"}, invokes=3)
    assert not r.passed
    rows = {i["invoke"]: i for i in r.invokes}
    assert rows[1]["passed"] and not rows[2]["passed"] and not rows[3]["passed"]
    assert rows[2]["matches_invoke"] == 1 and rows[3]["matches_invoke"] == 1
    assert rows[4]["repeat_of"] == 1 and rows[4]["passed"]  # the first input again: its own outputs


def test_check_json_names_the_node_on_the_command_line():
    """The issue's end-to-end case: face_detection_short_range, node 2."""
    p = run_cli("check", "face_detection_short_range", "--bisect", "--json", "--invokes", "2",
                env={"TFLITE_GPU_TEST_PERTURB_NODE": "2"})
    assert p.returncode == 1, p.stderr  # a check that fails
    (row,) = strict_json(p.stdout)
    first = row["bisect"]["first"]
    assert first["node"] == 2 or 2 in first["group"]["members"], first
    assert [i["invoke"] for i in row["invokes"]] == [1, 2, 3] and row["invokes"][2]["repeat_of"] == 1
    text = run_cli("check", "face_detection_short_range", "--bisect", env={"TFLITE_GPU_TEST_PERTURB_NODE": "2"})
    assert "first node that differs: node" in text.stdout and "computed by partition 0" in text.stdout
