"""check's and bench's --inputs FILE.npz and --input NAME=FILE.npy: the
arguments, and the user's arrays checked against the model's inputs
(name, shape, dtype; inputs.py) before anything runs."""
from __future__ import annotations

from . import inputs as model_inputs
from . import verify
from ._output import display
from .errors import CliError


def add_input_arguments(p) -> None:
    p.add_argument("--inputs", metavar="FILE.npz",
                   help="the model's inputs from an .npz, one array per input name (the rest generated)")
    p.add_argument("--input", action="append", metavar="NAME=FILE.npy",
                   help="one input from an .npy (repeatable); checked against the input's shape and dtype")


def one_model_inputs(args) -> None:
    """--inputs / --input give one model's inputs: refused with several models."""
    if (args.inputs or args.input) and len(args.model) > 1:
        raise CliError("usage", f"--inputs and --input give one model's inputs; {len(args.model)} models given")


def user_inputs(args, path) -> list:
    """--inputs / --input as inputs.user_entries, checked against the
    model at path: CliError (usage, exit 2) naming what does not fit."""
    try:
        entries = model_inputs.user_entries(args.inputs, args.input)
        if entries:
            model_inputs.plan(verify.read_model(path), entries)
    except model_inputs.InputsError as e:
        raise CliError("usage", f"{display(path)}: {e}") from None
    return entries
