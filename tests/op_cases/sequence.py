"""UNIDIRECTIONAL_SEQUENCE_LSTM and UNIDIRECTIONAL_SEQUENCE_RNN as TF's
converter writes them for Keras LSTM / SimpleRNN layers, and
BIDIRECTIONAL_SEQUENCE_LSTM: float weights,
the states as variable tensors (zero at the start, carried across invokes).
Odd batch, step, depth and unit counts, batch- and time-major, CIFG,
peepholes, cell clipping and the activations the CPU kernels apply."""

import numpy as np

from ._common import Case, _input


def _w(mb, rng, shape, fan_in):
    # Weights scaled by 1/sqrt(fan-in) keep the gates out of saturation, so a
    # wrong weight or index changes the outputs.
    data = rng.standard_normal(shape, dtype=np.float32) / np.float32(np.sqrt(fan_in))
    return mb.add_tensor(shape, data=data)


def _seq_shape(batch, steps, depth, time_major):
    return [steps, batch, depth] if time_major else [batch, steps, depth]


def _lstm_weights(mb, rng, depth, units, cifg=False, peephole=False):
    """Inputs 1-17 of an LSTM direction: input, recurrent, peephole and bias
    tensors (absent ones -1), no projection."""
    fan = depth + units
    wx = [-1 if (g == 0 and cifg) else _w(mb, rng, [units, depth], fan) for g in range(4)]
    wh = [-1 if (g == 0 and cifg) else _w(mb, rng, [units, units], fan) for g in range(4)]
    peep = [-1 if (not peephole or (g == 0 and cifg)) else _w(mb, rng, [units], 1) for g in range(3)]
    bias = [-1 if (g == 0 and cifg) else _w(mb, rng, [units], 4) for g in range(4)]
    return wx + wh + peep + bias + [-1, -1]


def _states(mb, batch, units):
    return [mb.add_tensor([batch, units], variable=True, name="output_state"),
            mb.add_tensor([batch, units], variable=True, name="cell_state")]


def _add_lstm(mb, rng, x, batch, steps, depth, units, time_major=False, cifg=False, peephole=False, act="TANH",
              cell_clip=0.0, inputs24=False):
    """An UNIDIRECTIONAL_SEQUENCE_LSTM reading x, with its weights and
    variable states; returns its output sequence."""
    ins = [x] + _lstm_weights(mb, rng, depth, units, cifg, peephole) + _states(mb, batch, units)
    ins += [-1] * 4 if inputs24 else []
    out = mb.add_tensor(_seq_shape(batch, steps, units, time_major))
    mb.add_op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [out],
              dict(fused_activation=act, cell_clip=cell_clip, time_major=time_major))
    return out


def _lstm_case(batch, steps, depth, units, time_major=False, cifg=False, peephole=False, act="TANH",
               cell_clip=0.0, inputs24=False):
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, _seq_shape(batch, steps, depth, time_major), inputs)
        mb.mark_output(_add_lstm(mb, rng, x, batch, steps, depth, units, time_major, cifg, peephole, act, cell_clip,
                                 inputs24))
        return inputs

    tags = "".join(t for t, on in (("-tm", time_major), ("-cifg", cifg), ("-peep", peephole),
                                   (f"-clip{cell_clip:g}", cell_clip > 0), ("-24in", inputs24)) if on)
    return Case(f"seq-lstm-b{batch}-t{steps}-i{depth}-u{units}-{act.lower()}{tags}", build)


def _rnn_case(batch, steps, depth, units, time_major=False, act="TANH"):
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, _seq_shape(batch, steps, depth, time_major), inputs)
        fan = depth + units
        ins = [x, _w(mb, rng, [units, depth], fan), _w(mb, rng, [units, units], fan), _w(mb, rng, [units], 4),
               mb.add_tensor([batch, units], variable=True, name="hidden_state")]
        out = mb.add_tensor(_seq_shape(batch, steps, units, time_major))
        mb.add_op("UNIDIRECTIONAL_SEQUENCE_RNN", ins, [out], dict(fused_activation=act, time_major=time_major))
        mb.mark_output(out)
        return inputs

    return Case(f"seq-rnn-b{batch}-t{steps}-i{depth}-u{units}-{act.lower()}{'-tm' if time_major else ''}", build)


def _lstm_into_l2norm_case(batch, steps, depth, units):
    """The output sequence read whole-float4 by the next kernel: an
    L2_NORMALIZATION over units sums the padded lanes too, so they must be
    zeros."""
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, [batch, steps, depth], inputs)
        seq = _add_lstm(mb, rng, x, batch, steps, depth, units)
        out = mb.add_tensor([batch, steps, units])
        mb.add_op("L2_NORMALIZATION", [seq], [out], dict(fused_activation="NONE"))
        mb.mark_output(out)
        return inputs

    return Case(f"seq-lstm-b{batch}-t{steps}-i{depth}-u{units}-then-l2norm", build)


def _bidirectional_case(batch, steps, depth, units):
    """Keras Bidirectional(LSTM(return_sequences=True)) as TF's converter
    writes it: a forward LSTM, a backward one between two REVERSE_V2 on the
    time axis, and a CONCATENATION of both sequences; all of it delegated."""
    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, [batch, steps, depth], inputs)
        time_axis = mb.add_tensor([1], np.int32, data=np.array([1], np.int32))
        fwd = _add_lstm(mb, rng, x, batch, steps, depth, units)
        x_rev = mb.add_tensor([batch, steps, depth])
        mb.add_op("REVERSE_V2", [x, time_axis], [x_rev])
        bwd_rev = _add_lstm(mb, rng, x_rev, batch, steps, depth, units, peephole=True)
        bwd = mb.add_tensor([batch, steps, units])
        mb.add_op("REVERSE_V2", [bwd_rev, time_axis], [bwd])
        out = mb.add_tensor([batch, steps, 2 * units])
        mb.add_op("CONCATENATION", [fwd, bwd], [out], dict(axis=2))
        mb.mark_output(out)
        return inputs

    return Case(f"seq-bidirectional-lstm-b{batch}-t{steps}-i{depth}-u{units}", build)


def _bilstm_case(batch, steps, depth, units, merge=True, time_major=True, cifg_bw=False, peephole_fw=False):
    """BIDIRECTIONAL_SEQUENCE_LSTM (48 inputs): forward weights, backward
    weights, the four states, no auxiliary input."""
    shape = _seq_shape(batch, steps, depth, time_major)
    out_shape = _seq_shape(batch, steps, units * (2 if merge else 1), time_major)

    def build(mb, rng, cpu):
        inputs = []
        x = _input(mb, rng, shape, inputs)
        ins = [x] + _lstm_weights(mb, rng, depth, units, peephole=peephole_fw)
        ins += _lstm_weights(mb, rng, depth, units, cifg=cifg_bw)
        ins += _states(mb, batch, units) + _states(mb, batch, units) + [-1] * 9
        outs = [mb.add_tensor(out_shape) for _ in range(1 if merge else 2)]
        mb.add_op("BIDIRECTIONAL_SEQUENCE_LSTM", ins, outs, dict(merge_outputs=merge, time_major=time_major))
        for o in outs:
            mb.mark_output(o)
        return inputs

    tags = "".join(t for t, on in (("-merged", merge), ("-tm", time_major), ("-bwcifg", cifg_bw),
                                   ("-fwpeep", peephole_fw)) if on)
    return Case(f"seq-bilstm-b{batch}-t{steps}-i{depth}-u{units}{tags}", build)


def sequence_cases():
    return [
        _lstm_case(1, 5, 3, 4),
        _lstm_case(2, 7, 5, 17),
        _lstm_case(3, 4, 17, 5, time_major=True),
        _lstm_case(2, 6, 3, 5, cifg=True),
        _lstm_case(2, 5, 4, 3, peephole=True),
        _lstm_case(1, 9, 1, 1, cifg=True, peephole=True, act="RELU", cell_clip=0.5),
        _lstm_case(3, 3, 8, 5, act="RELU_N1_TO_1", cell_clip=0.8, inputs24=True),
        _rnn_case(1, 5, 3, 4),  # ids spell the activation in lower case: "-TANH" marks a fused TANH in test_ops
        _rnn_case(2, 7, 17, 5, act="RELU"),
        _rnn_case(3, 4, 5, 17, time_major=True),
        _rnn_case(2, 5, 1, 3, act="RELU6"),
        _lstm_into_l2norm_case(2, 4, 3, 5),
        _bidirectional_case(2, 5, 3, 5),
        _bilstm_case(2, 5, 3, 5),
        _bilstm_case(3, 4, 17, 3, merge=False, time_major=False, cifg_bw=True, peephole_fw=True),
    ]
