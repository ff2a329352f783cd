"""The fuse stage's table of passes (delegate_c/passes/fuse.c): the one source of
what fuses into what, in which kernel set, in which order, and which hook
switches it off. The library lists it (tflite_gpu_describe_passes), each
partition reports the passes that ran on it and what each did, `explain
--passes` prints both, and docs/how-it-works.md holds the generated table."""
import pathlib
import sys

import numpy as np
import pytest

import tflite_gpu
from tflite_gpu import _capi, explain, models
from tflite_gpu.model_builder import ModelBuilder
from conftest import set_policy

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

# The run order (fuse.h FusePassId): a new pass is added here too, on purpose.
ORDER = ["layer_norm", "pad", "channel_affine", "hoist_residuals", "epilogues", "pooled_residual", "dw_1x1", "pw_dw",
         "channel_scale", "upsampled_source", "summed_reduce", "fc_pair", "fc_heads", "prelu_source", "input_direct",
         "mixed_storage", "output_assembly", "output_direct"]
# Passes that make nodes only the VM's fine bodies implement (a GPU's): not
# in the kernel sets' runs.
VM_ONLY = ["prelu_source"]


def test_the_table_lists_every_pass_in_order():
    table = _capi.fusion_passes()
    assert [p["name"] for p in table] == ORDER
    hooks = [p["hook"] for p in table if p["hook"]]
    assert len(hooks) == len(set(hooks)) and all(h.startswith("TFLITE_GPU_") for h in hooks)
    env = {v["name"] for v in _capi.env_vars()}
    assert set(hooks) <= env, set(hooks) - env  # each hook in the library's one list of variables
    fields = {f["name"] for f in _capi.policy_fields()}
    assert {p["policy_field"] for p in table if p["policy_field"]} == {"fuse_dw_1x1", "fuse_pw_dw"} <= fields
    for p in table:
        assert p["matches"] and set(p["kernel_sets"]) <= {"cpu", "gpu", "vm"}
        assert "gpu" in p["kernel_sets"] or (p["kernel_sets"] == ["vm"] and p["name"] in VM_ONLY), p
        assert not (p["hook"] and p["policy_field"]), p
        # A pass that makes GPU-set-only nodes (and their VM forms) can be
        # switched off: that is how a wrong one is found.
        if "cpu" not in p["kernel_sets"]:
            assert p["hook"] or p["policy_field"], p


def _conv_model():
    """A 3x3 CONV_2D then a RELU: one partition, one launch on the GPU set."""
    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x = mb.add_input([1, 9, 7, 3])
    w = mb.add_tensor([5, 3, 3, 3], data=rng.standard_normal([5, 3, 3, 3]).astype(np.float32))
    b = mb.add_tensor([5], data=rng.standard_normal([5]).astype(np.float32))
    y, z = mb.add_tensor([1, 9, 7, 5]), mb.add_tensor([1, 9, 7, 5])
    mb.add_op("CONV_2D", [x, w, b], [y], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation="NONE"))
    mb.add_op("RELU", [y], [z])
    mb.mark_output(z)
    return mb.build()


def _passes_run(tmp_path, kernel_set):
    path = tmp_path / "conv.tflite"
    path.write_bytes(_conv_model())
    (part,) = explain.explain(path, {"kernel_set": kernel_set})["partitions"]
    return part["passes"]


def test_the_kernel_set_and_each_hook_decide_what_runs(tmp_path, monkeypatch):
    table = _capi.fusion_passes()
    cpu = _passes_run(tmp_path, "cpu")
    assert list(cpu) == [p["name"] for p in table if "cpu" in p["kernel_sets"]]
    gpu = _passes_run(tmp_path, "gpu")
    gpu_order = [n for n in ORDER if n not in VM_ONLY]
    assert list(gpu) == gpu_order  # PoCL runs every conv group of the GPU set
    assert gpu["epilogues"] == 1 and gpu["input_direct"] == 1 and gpu["output_direct"] == 1
    for p in table:
        if p["hook"]:
            monkeypatch.setenv(p["hook"], "0")
        elif p["policy_field"]:
            set_policy(monkeypatch, **{p["policy_field"]: 0})
        else:
            continue
        assert list(_passes_run(tmp_path, "gpu")) == [n for n in gpu_order if n != p["name"]], p
        if p["hook"]:
            monkeypatch.setenv(p["hook"], "1")
        else:
            set_policy(monkeypatch, **{p["policy_field"]: None})
    # The VM's fine bodies (policy vm_fine=1: a GPU's) run the VM-only passes too.
    set_policy(monkeypatch, vm_fine="1")
    path = tmp_path / "conv.tflite"
    (part,) = explain.explain(path, {"execution": "persistent"})["partitions"]
    assert set(VM_ONLY) <= set(part["passes"]), part["passes"]


@pytest.mark.parametrize("model,fired", [
    ("face_detection_short_range", {"epilogues", "dw_1x1", "input_direct", "output_assembly", "output_direct"}),
    ("selfie_segmentation", {"channel_scale", "upsampled_source", "summed_reduce", "fc_pair", "pw_dw"}),
])
def test_the_passes_that_fire_on_real_models(model, fired):
    """What each pass did comes back per partition; the ones these models
    are known for fire, and explain --passes prints the table with them."""
    path = models.fetch_models([model], progress=False)[model]
    report = explain.explain(path, {"kernel_set": "gpu"})
    totals = explain.pass_totals(report)
    assert fired <= {n for n, c in totals.items() if c > 0}, totals
    report["show_passes"] = True
    text = explain.format_explain(report)
    assert "fusion passes, in order" in text and all(f"  {n} " in text for n in ORDER)


def test_the_docs_hold_the_generated_table():
    import gen_docs

    page = (ROOT / "docs" / "how-it-works.md").read_text()
    start, end = "<!-- passes:begin -->", "<!-- passes:end -->"
    assert start in page and end in page
    table = page.split(start, 1)[1].split(end, 1)[0].strip()
    assert table == gen_docs.passes_markdown().strip(), "docs/how-it-works.md is stale: run python tools/gen_docs.py"


def test_a_delegate_reports_no_pass_without_a_partition(tmp_path):
    """A model with nothing to delegate builds no partition: no pass ran."""
    d = tflite_gpu.load_delegate(log_level="silent")
    assert _capi.delegate_partitions(d._get_native_delegate_pointer()) == []


def test_explain_passes_on_the_command_line():
    from cli_run import run_cli

    p = run_cli("explain", "face_detection_short_range", "--opt", "kernel_set=gpu", "--passes")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split("fusion passes, in order", 1)[1].splitlines()[1:]
    assert [ln.split()[0] for ln in lines[:len(ORDER)]] == ORDER
    off = [ln.split()[0] for ln in lines[:len(ORDER)] if ln.split()[1] == "off"]
    assert off == VM_ONLY, off  # the GPU set runs every other pass here
    assert "fusion passes" not in run_cli("explain", "face_detection_short_range").stdout
