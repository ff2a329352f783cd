"""execution=stepped and execution=persistent (issue 36, delegate_c/vm/vm.h):
the partition as an op list for one VM program of the CPU kernel set's
bodies, launched per phase or once per segment with grid barriers between
phases. On PoCL (2 compute units: a persistent grid of 2 groups).

Tolerances: against the CPU interpreter, check's own (FP32 1e-4, FP16 1e-2
relative L2); stepped against persistent, none: the same program, op list
and bodies compute every value the same way, so they must agree bit for
bit."""
import numpy as np
import pytest

import tflite_gpu
from conftest import set_policy
from cli_run import run_cli, strict_json
from tflite_gpu import _capi, check, explain, interpreters, models

MODELS = ["face_detection_short_range", "hand_recrop", "iris_landmark"]


def _path(name):
    return models.fetch_models([name], progress=False)[name]


def _run(name, execution, invokes=2, **options):
    """(outputs of the last invoke, how it ran) through a fresh delegate."""
    d = tflite_gpu.load_delegate(log_level="silent", execution=execution, **options)
    it = interpreters.make(str(_path(name)), delegate=d)
    x = check.random_inputs(it.get_input_details(), 3)
    for _ in range(invokes):
        out = interpreters.run(it, x)
    runs = _capi.delegate_runs(d._get_native_delegate_pointer())
    del it
    return out, runs


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("execution", ["stepped", "persistent"])
@pytest.mark.parametrize("name", MODELS)
def test_a_model_runs_right_in_each_mode(name, execution, fp16):
    r = check.check_model(_path(name), {"execution": execution, "is_precision_loss_allowed": int(fp16),
                                        "log_level": "silent"}, invokes=2)
    assert r.passed, [(o.name, o.rel_l2) for o in r.outputs]


def test_pose_landmark_full_fp16_with_its_guard_is_one_launch():
    """fp16_guard=on keeps most of pose_landmark_full on float; in the VM
    modes that makes the whole partition float (the program holds one
    storage), so it is one persistent launch and right."""
    path = _path("pose_landmark_full")
    options = {"execution": "persistent", "is_precision_loss_allowed": 1, "fp16_guard": "on", "log_level": "silent"}
    r = check.check_model(path, options, invokes=2)
    assert r.passed, [(o.name, o.rel_l2) for o in r.outputs]
    (p,) = explain.explain(path, options)["partitions"]
    assert p["execution"] == "persistent" and p["launches"] == 1, p


@pytest.mark.parametrize("name", MODELS)
def test_stepped_and_persistent_agree_bit_for_bit(name):
    stepped, runs_s = _run(name, "stepped")
    persistent, runs_p = _run(name, "persistent")
    assert [r["execution"] for r in runs_s] == ["stepped"] and [r["execution"] for r in runs_p] == ["persistent"]
    for a, b in zip(stepped, persistent):
        np.testing.assert_array_equal(a, b)


def test_one_launch_per_invoke():
    """face_detection_short_range: every dispatch has a body, so a
    persistent invoke is one launch; stepped is one per dispatch."""
    path = _path("face_detection_short_range")
    (p,) = explain.explain(path, {"execution": "persistent"})["partitions"]
    assert p["execution"] == "persistent" and p["launches"] == 1 and p["dispatches"] > 40
    (s,) = explain.explain(path, {"execution": "stepped"})["partitions"]
    assert s["execution"] == "stepped" and s["launches"] == s["dispatches"] == p["dispatches"]
    (k,) = explain.explain(path, {"kernel_set": "cpu"})["partitions"]
    assert k["execution"] == "kernels" and k["launches"] == k["dispatches"] == p["dispatches"]
    _, runs = _run("face_detection_short_range", "persistent")
    assert runs == [{"partition": 0, "execution": "persistent", "launches": 1, "fallback": ""}]


@pytest.mark.parametrize("execution", ["stepped", "persistent"])
def test_kernel_set_gpu_with_a_vm_execution_builds_every_dispatch_as_a_phase(execution):
    """The VM encodes its phases from the CPU set's dispatches: kernel_set=gpu
    asked beside a VM execution must not leave the GPU set's kernels outside
    the program (a persistent invoke of 8 launches, found on Intel's runtime)."""
    path = _path("hand_recrop")
    (p,) = explain.explain(path, {"execution": execution, "kernel_set": "gpu"})["partitions"]
    (c,) = explain.explain(path, {"execution": execution, "kernel_set": "cpu"})["partitions"]
    assert p["execution"] == execution and p["launches"] == c["launches"], (p, c)
    assert p["launches"] == (1 if execution == "persistent" else p["dispatches"]), p
    r = check.check_model(path, {"execution": execution, "kernel_set": "gpu", "log_level": "silent"}, invokes=2)
    assert r.passed, [(o.name, o.rel_l2) for o in r.outputs]

def _kernels(name, execution, **options):
    """The kernels a fresh delegate's phases run, and check's verdict on its outputs."""
    d = tflite_gpu.load_delegate(log_level="silent", execution=execution, **options)
    it = interpreters.make(str(_path(name)), delegate=d)
    interpreters.run(it, check.random_inputs(it.get_input_details(), 3))
    kernels = {k for g in _capi.delegate_groups(d._get_native_delegate_pointer()) for k in g["kernels"]}
    del it
    r = check.check_model(_path(name), {"execution": execution, "log_level": "silent", **options}, invokes=2)
    return kernels, r


TILED = ("conv2d_1x1", "conv2d_tiled", "depthwise_3x3_s1", "depthwise_3x3_s2", "depthwise_5x5_s1")


@pytest.mark.parametrize("fine", [None, "1", "0"], ids=["default", "fine", "tiled"])
def test_a_gpu_runs_fine_grained_conv_bodies(monkeypatch, fine):
    """On a GPU the VM's convs take the bodies of one float4 or 4 pixels x
    4 channels a work-item (select_vm_fine: register tiles keep a few of its
    units busy); a CPU, as PoCL here, keeps the tiles.
    policy vm_fine forces either; both check right in both modes."""
    if fine is not None:
        set_policy(monkeypatch, vm_fine=fine)
    is_gpu = _capi.device_caps(0)["type"] == "GPU"  # GPU whenever the device says it is one
    want_fine = fine == "1" or (fine is None and is_gpu)
    for execution in ("stepped", "persistent"):
        kernels, r = _kernels("face_detection_short_range", execution)
        assert r.passed, (execution, [(o.name, o.rel_l2) for o in r.outputs])
        tiled = sorted(k for k in kernels if k.startswith(TILED))
        if want_fine:
            assert {"conv2d_x4", "depthwise_conv2d_multiplier"} <= kernels and not tiled, kernels
        else:
            assert tiled and "depthwise_conv2d_multiplier" not in kernels, kernels


def _global_pools():
    """A global AVERAGE_POOL_2D with RELU6 and a global MAX_POOL_2D of a
    13x11 plane (143 taps), batch 2, 5 channels: seeded random inputs."""
    from tflite_gpu.model_builder import ModelBuilder

    mb = ModelBuilder()
    x = mb.add_input([2, 13, 11, 5])
    for op, act in (("AVERAGE_POOL_2D", "RELU6"), ("MAX_POOL_2D", "NONE")):
        y = mb.add_tensor([2, 1, 1, 5])
        mb.add_op(op, [x], [y], dict(padding="VALID", stride_w=1, stride_h=1, filter_w=11, filter_h=13,
                                     fused_activation=act))
        mb.mark_output(y)
    return mb.build(), [np.random.default_rng(5).uniform(-1, 8, [2, 13, 11, 5]).astype(np.float32)]


@pytest.mark.parametrize("fine,split", [("1", "1"), ("1", "0"), ("0", "1")], ids=["fine", "one-phase", "tiled"])
def test_a_long_reduction_runs_in_two_phases_on_a_gpu(monkeypatch, fine, split):
    """With the VM's fine bodies (a GPU) a reduction over H and W of 64 or
    more taps runs as two reduce phases, over W then over H (select_reduce_split:
    one serial window per work-item kept 4 work-items busy for
    selfie_segmentation's 128x128 pools); otherwise one. Against the CPU
    interpreter within FP32's 1e-5 (the sums are reordered), both modes.
    policy vm_split_reduce=0 keeps one phase. The group bodies, which
    take such reductions first, held off (test_vm_group_bodies.py)."""
    from conftest import assert_close, run_cpu, set_policy

    set_policy(monkeypatch, vm_fine=fine)
    set_policy(monkeypatch, vm_group_bodies="0")
    set_policy(monkeypatch, vm_split_reduce=split)
    model, inputs = _global_pools()
    want = run_cpu(model, inputs)
    for execution in ("stepped", "persistent"):
        d = tflite_gpu.load_delegate(log_level="silent", execution=execution)
        it = interpreters.make(model, delegate=d)
        got = interpreters.run(it, inputs)
        kernels = [k for g in _capi.delegate_groups(d._get_native_delegate_pointer()) for k in g["kernels"]]
        runs = _capi.delegate_runs(d._get_native_delegate_pointer())
        del it
        assert runs[0]["execution"] == execution, runs
        assert kernels.count("reduce") == (4 if fine == split == "1" else 2), kernels
        for a, b in zip(got, want):
            assert_close(a, b, rtol_l2=1e-5, atol=1e-5)


def _check_split(model, inputs, want, want_kernels, prefix):
    """Stepped then persistent, two invokes each: no fallback, every node on
    the delegate, the launched kernels starting with `prefix` as
    want_kernels, every output the same bits as the first invoke's, and
    against the CPU interpreter's within FP32's 1e-5, relative (the split
    reorders sums of up to 1,152 products, whose rounding scales with the
    outputs)."""
    from conftest import assert_close

    first = None
    for execution in ("stepped", "persistent"):
        d = tflite_gpu.load_delegate(log_level="silent", execution=execution)
        it = interpreters.make(model, delegate=d)
        outs = [interpreters.run(it, inputs) for _ in range(2)]
        kernels = [k for g in _capi.delegate_groups(d._get_native_delegate_pointer()) for k in g["kernels"]]
        runs = _capi.delegate_runs(d._get_native_delegate_pointer())
        stats = _capi.delegate_stats(d._get_native_delegate_pointer())
        del it
        assert runs[0]["execution"] == execution and runs[0]["fallback"] == "", runs
        assert stats["cpu_nodes"] == 0, stats
        assert [k for k in kernels if k.startswith(prefix)] == want_kernels, kernels
        first = first if first is not None else outs[0]
        for got in outs:
            for a, b in zip(got, first):
                np.testing.assert_array_equal(a, b)
        for a, b in zip(outs[0], want):
            assert_close(a, b, rtol_l2=1e-5, atol=1e-5 * max(1.0, float(np.abs(b).max())))


@pytest.mark.parametrize("split", ["1", "0"], ids=["split", "one-pass"])
@pytest.mark.parametrize("in_shape,units,act", [([1, 1152], 63, "NONE"),  # hand_landmark's heads
                                                ([1, 601], 1, "RELU6"),   # a partial last slice and chunk
                                                ([3, 517], 17, "RELU")],  # 3 rows
                         ids=["1x1152-63", "1x601-1", "3x517-17"])
def test_a_fully_connected_with_few_outputs_splits_over_k_on_a_gpu(monkeypatch, in_shape, units, act, split):
    """With the VM's fine bodies (a GPU) a FULLY_CONNECTED of few output
    float4s (TFLITE_GPU_COMPUTE_UNITS=132 sizes the grid as an H200's) and
    128 input slices or more runs as two phases (select_fc_split):
    partial dot products per chunk of input slices, then their sum in chunk
    order. Against the CPU interpreter within FP32's 1e-5, relative (the sums
    are reordered); every invoke, stepped and persistent, gives the same bits
    (a fixed order, no atomics). policy vm_split_fc=0 keeps one pass.
    The group bodies, which take such FCs first, held off
    (test_vm_group_bodies.py)."""
    from conftest import run_cpu
    from op_cases.conv import _fc_case

    set_policy(monkeypatch, vm_fine="1")
    set_policy(monkeypatch, vm_group_bodies="0")
    monkeypatch.setenv("TFLITE_GPU_COMPUTE_UNITS", "132")
    set_policy(monkeypatch, vm_split_fc=split)
    model, reference, inputs = _fc_case(in_shape, units, act=act).make()
    want_kernels = ["fully_connected_split", "fully_connected_sum"] if split == "1" else ["fully_connected"]
    _check_split(model, inputs, run_cpu(reference, inputs), want_kernels, "fully_connected")


def _conv_epilogue_model(n, h, w, cin, cout, k, stride, padding, dilation, act, epilogue):
    """x -> CONV_2D (k x k) -> [PRELU per channel, ADD(r) with RELU] as the
    epilogue the conv takes (fuse_epilogue.c); seeded random inputs."""
    from op_cases._common import _out_size
    from tflite_gpu.model_builder import ModelBuilder

    rng = np.random.default_rng(17)
    mb = ModelBuilder()
    x = mb.add_input([n, h, w, cin])
    out = [n, _out_size(h, k, stride, dilation, padding), _out_size(w, k, stride, dilation, padding), cout]
    r = mb.add_input(out) if epilogue else None
    wt = mb.add_tensor([cout, k, k, cin], data=rng.standard_normal([cout, k, k, cin]).astype(np.float32))
    b = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
    y = mb.add_tensor(out)
    mb.add_op("CONV_2D", [x, wt, b], [y], dict(padding=padding, stride_w=stride, stride_h=stride,
                                               dilation_w=dilation, dilation_h=dilation,
                                               fused_activation=act))
    if epilogue:
        alpha = mb.add_tensor([cout], data=rng.uniform(0.05, 0.5, [cout]).astype(np.float32))
        p = mb.add_tensor(out)
        mb.add_op("PRELU", [y, alpha], [p])
        y = mb.add_tensor(out)
        mb.add_op("ADD", [p, r], [y], dict(fused_activation="RELU"))
    mb.mark_output(y)
    inputs = [rng.standard_normal([n, h, w, cin]).astype(np.float32)]
    if epilogue:
        inputs.append(rng.standard_normal(out).astype(np.float32))
    return mb.build(), inputs


@pytest.mark.parametrize("split", ["1", "0"], ids=["split", "one-pass"])
@pytest.mark.parametrize("shape", [(1, 2, 2, 288, 195, 2, 1, "VALID", 1, "NONE", False),  # pose_landmark's heads
                                   (2, 7, 9, 60, 17, 3, 2, "SAME", 1, "RELU", True),
                                   (1, 9, 11, 57, 5, 3, 1, "SAME", 2, "RELU6", True)],
                         ids=["2x2x288-k2-195", "b2-7x9x60-k3s2-17-epilogue", "9x11x57-k3d2-5-epilogue"])
def test_a_conv_of_few_outputs_splits_its_reduction_on_a_gpu(monkeypatch, shape, split):
    """With the VM's fine bodies (a GPU; TFLITE_GPU_COMPUTE_UNITS=132 sizes
    the grid as an H200's) a conv of few output tiles and 128 reduction
    steps or more runs as two phases (select_conv_split): partials per chunk
    of (tap, input slice) steps, then their sum in chunk order with the
    activation and the fused PRELU and residual ADD. Against the CPU
    interpreter within FP32's 1e-5, relative (the sums are reordered);
    every invoke, stepped and persistent, gives the same bits.
    policy vm_split_conv=0 keeps one pass."""
    from conftest import run_cpu

    set_policy(monkeypatch, vm_fine="1")
    monkeypatch.setenv("TFLITE_GPU_COMPUTE_UNITS", "132")
    set_policy(monkeypatch, vm_split_conv=split)
    model, inputs = _conv_epilogue_model(*shape)
    want_kernels = ["conv2d_x4_split", "conv2d_x4_sum"] if split == "1" else ["conv2d_x4"]
    _check_split(model, inputs, run_cpu(model, inputs), want_kernels, "conv")


@pytest.mark.parametrize("min_steps", [None, "32"], ids=["default", "32"])
def test_the_split_threshold_is_a_switch(monkeypatch, min_steps):
    """A conv of 45 reduction steps (3x3 over 5 input slices) stays one
    pass under VM_SPLIT_MIN_STEPS (128) and splits with the A/B switch
    policy vm_split_min_steps=32, right either way."""
    from conftest import run_cpu

    set_policy(monkeypatch, vm_fine="1")
    monkeypatch.setenv("TFLITE_GPU_COMPUTE_UNITS", "132")
    if min_steps:
        set_policy(monkeypatch, vm_split_min_steps=min_steps)
    model, inputs = _conv_epilogue_model(1, 5, 7, 19, 5, 3, 1, "SAME", 1, "RELU", True)
    want_kernels = ["conv2d_x4_split", "conv2d_x4_sum"] if min_steps else ["conv2d_x4"]
    _check_split(model, inputs, run_cpu(model, inputs), want_kernels, "conv")


def _two_heads():
    """x -> conv a (3x3, 5 -> 7, RELU) -> conv c (3x3, 7 -> 17); x -> conv b
    (1x1, 5 -> 3); outputs b and c. Seeded random weights and input."""
    from tflite_gpu.model_builder import ModelBuilder

    rng = np.random.default_rng(3)
    mb = ModelBuilder()
    x = mb.add_input([1, 9, 11, 5])

    def conv(src, cin, cout, k, act="NONE"):
        w = mb.add_tensor([cout, k, k, cin], data=rng.standard_normal([cout, k, k, cin]).astype(np.float32))
        b = mb.add_tensor([cout], data=rng.standard_normal([cout]).astype(np.float32))
        y = mb.add_tensor([1, 9, 11, cout])
        mb.add_op("CONV_2D", [src, w, b], [y], dict(padding="SAME", stride_w=1, stride_h=1, fused_activation=act))
        return y

    a = conv(x, 5, 7, 3, "RELU")
    b = conv(x, 5, 3, 1)
    c = conv(a, 7, 17, 3)
    mb.mark_output(b)
    mb.mark_output(c)
    return mb.build(), [rng.standard_normal([1, 9, 11, 5]).astype(np.float32)]


@pytest.mark.parametrize("schedule", ["1", "0"], ids=["by-level", "in-order"])
def test_independent_phases_share_a_barrier_interval(capfd, monkeypatch, schedule):
    """The persistent launch runs each segment's phases by level (vm.c
    schedule): a phase after every phase it depends on (it reads what one
    writes, or writes what one touches), a grid barrier between levels
    only. Here 6 phases: x's conversion; convs a and b (both read x);
    conv c (reads a) with b's output conversion; c's output conversion:
    4 levels, 3 barriers where dispatch order needs 5. Outputs as the CPU
    interpreter's (FP32, 1e-5 relative) and bit for bit as stepped's, which
    runs dispatch order. policy vm_schedule=0 keeps dispatch order, a
    barrier before every phase."""
    from conftest import assert_close, run_cpu

    set_policy(monkeypatch, vm_schedule=schedule)
    barriers = 3 if schedule == "1" else 5

    model, inputs = _two_heads()
    want = run_cpu(model, inputs)
    got = {}
    for execution in ("stepped", "persistent"):
        capfd.readouterr()
        d = tflite_gpu.load_delegate(log_level="info", execution=execution)
        it = interpreters.make(model, delegate=d)
        got[execution] = [interpreters.run(it, inputs) for _ in range(2)][-1]
        runs = _capi.delegate_runs(d._get_native_delegate_pointer())
        (part,) = _capi.delegate_partitions(d._get_native_delegate_pointer())
        del it
        assert runs[0]["execution"] == execution and runs[0]["fallback"] == "", runs
        assert part["barriers"] == (barriers if execution == "persistent" else 0), part
        # explain --phases's rows: the 6 phases in dispatch order, each with
        # its level; the levels less one are the barriers (a single launch).
        phases = _capi.delegate_phases(d._get_native_delegate_pointer())
        assert len(phases) == 6 and {p["segment"] for p in phases} == {0}, phases
        assert sorted(p["level"] for p in phases) == ([0, 1, 1, 2, 2, 3] if schedule == "1" else list(range(6)))
        assert phases[0]["kernel"] == "bhwc_to_phwc4" and all(p["work_items"] > 0 for p in phases), phases
        assert len({p["level"] for p in phases}) - 1 == barriers
        err = capfd.readouterr().err
        assert f"6 of 6 dispatches as VM phases, 1 segment(s), {barriers} grid barrier(s)" in err, err
    for a, b in zip(got["persistent"], got["stepped"]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got["persistent"], want):
        assert_close(a, b, rtol_l2=1e-5, atol=1e-5 * max(1.0, float(np.abs(b).max())))


def test_more_groups_per_unit_run_right_or_fall_back(monkeypatch):
    """policy vm_groups_per_unit=4: a grid that may not stay resident
    (on PoCL's 2 cores, 8 groups); persistent if every barrier passed,
    else stepped with the reason, the outputs right either way."""
    want, _ = _run("hand_recrop", "stepped")
    set_policy(monkeypatch, vm_groups_per_unit="4")
    got, runs = _run("hand_recrop", "persistent", invokes=3)
    assert runs[0]["execution"] == "persistent" or "self-test" in runs[0]["fallback"] or \
        "timed out" in runs[0]["fallback"], runs
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_a_grid_of_one_group_never_falls_back(monkeypatch):
    monkeypatch.setenv("TFLITE_GPU_VM_GROUPS", "1")
    _, runs = _run("hand_recrop", "persistent", invokes=3)
    assert runs[0]["execution"] == "persistent" and runs[0]["fallback"] == ""


def test_a_barrier_timeout_reruns_stepped_and_says_why(monkeypatch, capfd):
    """The test hook raises the abort flag, as a wait past its bound does:
    the invoke runs again stepped, the outputs are still right, the
    delegate warns once and stays stepped."""
    monkeypatch.setenv("TFLITE_GPU_TEST_VM_TIMEOUT", "1")
    want, _ = _run("hand_recrop", "stepped", invokes=1)
    capfd.readouterr()
    d = tflite_gpu.load_delegate(log_level="warning", execution="persistent")
    it = interpreters.make(str(_path("hand_recrop")), delegate=d)
    x = check.random_inputs(it.get_input_details(), 3)
    for _ in range(3):
        got = interpreters.run(it, x)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    err = capfd.readouterr().err
    assert err.count("a grid barrier timed out") == 1 and "runs stepped from now on" in err
    (run,) = _capi.delegate_runs(d._get_native_delegate_pointer())
    assert run["execution"] == "stepped" and "timed out" in run["fallback"]


def _muls(n_in, n_out):
    """n_in inputs x_k, n_out outputs x_k * x_(k + 1 mod n_in)."""
    from tflite_gpu.model_builder import ModelBuilder
    mb = ModelBuilder()
    xs = [mb.add_input([1, 3, 5, 3]) for _ in range(n_in)]
    for k in range(n_out):
        a, b = xs[k], xs[(k + 1) % n_in]
        out = mb.add_tensor([1, 3, 5, 3])
        mb.add_op("MUL", [a, b], [out], dict(fused_activation="NONE"))
        mb.mark_output(out)
    return mb.build(), [np.random.default_rng(k).standard_normal([1, 3, 5, 3]).astype(np.float32) for k in range(n_in)]


@pytest.mark.parametrize("n_in, n_out", [(8, 8), (9, 8), (21, 20)])
def test_any_number_of_inputs_and_outputs_runs_on_the_vm(n_in, n_out):
    """The staging buffers of a partition's inputs and outputs are regions
    of the activation arena in the VM modes (executor.c plan_memory), not
    buffer arguments of the program: 16 or 41 of them run persistent, one
    launch, right (a partition of more than 16 used to run its kernels)."""
    model, inputs = _muls(n_in, n_out)
    d = tflite_gpu.load_delegate(log_level="silent", execution="persistent")
    it = interpreters.make(model, delegate=d)
    for _ in range(2):
        got = interpreters.run(it, inputs)
        for k, g in enumerate(got):
            np.testing.assert_allclose(g, inputs[k] * inputs[(k + 1) % n_in], rtol=1e-6)
    ((part,), (run,)) = _capi.delegate_partitions(d._get_native_delegate_pointer()), \
        _capi.delegate_runs(d._get_native_delegate_pointer())
    assert (part["execution"], part["declined"], run["execution"], run["launches"]) == \
        ("persistent", "", "persistent", 1), (part, run)


def test_the_program_does_not_depend_on_the_inputs_and_outputs(tmp_path):
    """The program takes the two arenas alone (kernel_abi.h VM_NUM_SPACES):
    partitions of the same ops with 4 + 3 and 9 + 8 boundary tensors build
    the same program, the same defines."""
    import re
    built = []
    for n_in, n_out in ((4, 3), (9, 8)):
        path = tmp_path / f"m{n_in}.tflite"
        path.write_bytes(_muls(n_in, n_out)[0])
        p = run_cli("explain", str(path), "--opt", "execution=persistent", env={"TFLITE_GPU_BUILD_LOG": "1"})
        assert p.returncode == 0, p.stderr
        (options,) = re.findall(r"build vm_program\.cl \[([^\]]*)\]", p.stderr + p.stdout)
        built.append(options)
    assert built[0] == built[1] and "STAGING" not in built[0], built


def test_a_partition_the_vm_cannot_take_says_why(capfd, tmp_path, monkeypatch):
    """A partition the VM cannot take (here each activation in a buffer of
    its own, a test setting, where the VM needs offsets in one arena) runs
    its kernels, right, and the warning, the partition and run reports and
    explain name the reason."""
    monkeypatch.setenv("TFLITE_GPU_SEPARATE_BUFFERS", "1")
    model, inputs = _muls(3, 2)
    capfd.readouterr()
    d = tflite_gpu.load_delegate(log_level="warning", execution="stepped")
    it = interpreters.make(model, delegate=d)
    got = interpreters.run(it, inputs)
    for k, g in enumerate(got):
        np.testing.assert_allclose(g, inputs[k] * inputs[k + 1], rtol=1e-6)
    why = "its activations are in buffers of their own (TFLITE_GPU_SEPARATE_BUFFERS)"
    assert f"execution=stepped: the partition runs its kernels: {why}" in capfd.readouterr().err
    pointer = d._get_native_delegate_pointer()
    ((part,), (run,)) = _capi.delegate_partitions(pointer), _capi.delegate_runs(pointer)
    assert (part["execution"], part["declined"], run["execution"], run["fallback"]) == ("kernels", why, "kernels", why)
    del it
    (tmp_path / "m.tflite").write_bytes(model)
    report = explain.explain(tmp_path / "m.tflite", {"execution": "stepped"})
    assert f"(not the VM: {why})" in explain.format_explain(report)


def test_a_failed_self_test_keeps_the_partition_stepped():
    """In a process of its own (the self-test's result is kept per device
    for the process): results as the CPU's, and the warning says why."""
    p = run_cli("check", "hand_recrop", "--opt", "execution=persistent", "--opt", "log_level=warning", "--json",
                env={"TFLITE_GPU_TEST_VM_SELFTEST_FAIL": "1"})
    assert p.returncode == 0, p.stderr
    assert strict_json(p.stdout)[0]["passed"]
    assert "the self-test failed" in p.stderr and "runs stepped from now on" in p.stderr


def test_bisect_works_in_the_vm_modes(monkeypatch):
    """Capture reads back after each phase (the persistent invoke runs
    stepped while capturing), and the perturb hook's kernel, which has no
    body, runs as a kernel between two segments."""
    monkeypatch.setenv("TFLITE_GPU_TEST_PERTURB_NODE", "2")
    r = check.check_model(_path("face_detection_short_range"), {"execution": "persistent", "log_level": "silent"},
                          invokes=1, bisect=True)
    first = r.bisect["first"]
    assert first["node"] == 2 or 2 in first["group"]["members"], first


@pytest.mark.parametrize("fp16", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("name", MODELS)
def test_the_checked_mode_finds_no_phase_writing_past_its_buffer(monkeypatch, name, fp16):
    """TFLITE_GPU_VM_CHECKED=1: a guard zone behind every buffer in the VM's
    arenas, read back after every phase; results still as the CPU's."""
    monkeypatch.setenv("TFLITE_GPU_VM_CHECKED", "1")
    r = check.check_model(_path(name), {"execution": "persistent", "is_precision_loss_allowed": int(fp16),
                                        "log_level": "silent"}, invokes=1)
    assert r.passed, r.outputs


def test_the_checked_mode_names_the_phase_that_writes_past_its_buffer(monkeypatch):
    """The test hook moves phase 3's activations 128 bytes on, so its output
    runs into the next guard: the invoke fails, naming the phase and kernel."""
    monkeypatch.setenv("TFLITE_GPU_VM_CHECKED", "1")
    monkeypatch.setenv("TFLITE_GPU_TEST_VM_SHIFT_PHASE", "3")
    with pytest.raises(RuntimeError, match=r"phase 3 \(dispatch 3, kernel \w+\) wrote past the end of activation"):
        _run("hand_recrop", "stepped", invokes=1)


def test_explain_lists_the_phases(tmp_path):
    """explain --phases lists each VM phase (launch, level, kernel, work-items,
    groups given work, TFLite node and op) and counts those that leave most
    of the grid idle;
    in kernels mode there are none."""
    model, _ = _two_heads()
    path = tmp_path / "two_heads.tflite"
    path.write_bytes(model)
    p = run_cli("explain", str(path), "--opt", "execution=persistent", "--phases")
    assert p.returncode == 0, p.stderr
    text = p.stdout.split("VM phases of partition 0", 1)[1]
    assert "bhwc_to_phwc4" in text and "6 phases in 4 levels" in text, text
    # Each phase names its TFLite node and op (the three convs; the conversions at the ends).
    rows = [ln for ln in text.splitlines()[2:] if ln.strip() and "phases in" not in ln]
    assert sum(ln.rstrip().endswith("CONV_2D") for ln in rows) == 3, text
    assert all(ln.rstrip().endswith(("CONV_2D", "(conversion)")) for ln in rows), text
    phases = explain.explain(path, {"execution": "persistent"})["phases"]
    assert sorted(p["tflite_node"] for p in phases if p["op"] == "CONV_2D") == [0, 1, 2], phases
    assert "VM phases: none" in run_cli("explain", str(path), "--phases").stdout
    # The summary's count, on synthetic rows: a phase of 100 work-items on
    # a grid of 132 groups of 64 gives work to 2 of them.
    sizes = [("conv2d_x4", 132 * 64), ("reduce", 100), ("reduce", 1000), ("fully_connected", 2113)]
    rows = [dict(partition=0, segment=0, level=min(k, 2), kernel=name, work_items=n, groups=132, group_size=64)
            for k, (name, n) in enumerate(sizes)]
    assert [explain.busy_groups(r) for r in rows] == [132, 2, 16, 34]
    out = explain.format_phases({"phases": rows})
    assert "4 phases in 3 levels; 2 give work to under a quarter of the grid's groups: reduce x2" in out, out
