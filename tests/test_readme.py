"""The README's first screen does what it says: both commands in its first
40 lines, at most 250 lines in all, and its Python snippet runs as printed
(on the runtime installed here, on a real model) through get_tensor."""
import pathlib
import re

import numpy as np

import tflite_gpu

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_first_screen_has_both_commands_and_the_readme_is_short():
    lines = README.splitlines()
    assert len(lines) <= 250, f"README.md is {len(lines)} lines: move developer material to docs/development.md"
    first = "\n".join(lines[:40])
    assert re.search(r"^tools/quickstart\.sh\b", first, flags=re.M)
    assert re.search(r"^tools/run_tests\.sh\b", first, flags=re.M)


def test_python_snippet_runs_through_get_tensor(tmp_path):
    from tflite_gpu import models

    snippet = re.search(r"```python\n(.*?)```", README, flags=re.S).group(1)
    assert "invoke()" in snippet and "get_tensor(" in snippet
    runtime = tflite_gpu.runtime().__name__.split(".")[0]
    if runtime != "tflite_runtime":
        snippet = snippet.replace("from tflite_runtime.interpreter", f"from {runtime}.interpreter")
    model = models.model_path("hand_recrop")
    scope = {}
    exec(compile(snippet.replace('"model.tflite"', repr(str(model))), "README.md", "exec"), scope)
    result = scope["result"]
    assert result.shape == tuple(scope["interpreter"].get_output_details()[0]["shape"])
    assert np.isfinite(result).all() and np.abs(result).sum() > 0
