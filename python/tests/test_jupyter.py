"""Jupyter: a tree shows as a captioned drawing, and a long reveal draws
its progress under the cell, by default in a notebook. The notebook test
runs a real kernel (ipykernel, through nbclient) and skips, saying so,
where they are not installed."""

import importlib.util
import shutil
import time

import numpy as np
import pytest

import fprev


def slow_sum(x):
    time.sleep(0.004)
    return np.sum(x)


def test_the_html_view_has_the_drawing_and_what_is_known():
    tree = fprev.reveal(np.sum, 64)
    html = tree._repr_html_()
    assert html.startswith('<figure class="fprev-tree">'), html[:200]
    caption = html[html.index("<figcaption>") :]
    assert "64 summands" in caption and "f32" in caption and "confirmed by replay" in caption, caption
    if shutil.which("dot"):
        assert "<svg" in html
    else:
        assert "<pre>" in html
    # A tree too long to print whole is cut short in the text view.
    assert fprev.Tree.from_formula("pairwise", 50_000)._repr_html_().count("<") < 10_000


def test_progress_is_written_to_python_s_stderr(capsys):
    fprev.reveal(slow_sum, 300, progress=True, confirm=0)
    err = capsys.readouterr().err
    assert "fprev: revealing:" in err and "summands placed" in err, err[-500:]
    # Off by default outside a notebook.
    fprev.reveal(slow_sum, 300, confirm=0)
    assert "fprev: revealing" not in capsys.readouterr().err


@pytest.mark.skipif(
    importlib.util.find_spec("nbclient") is None or importlib.util.find_spec("ipykernel") is None,
    reason="nbclient and ipykernel are not installed (scripts/test.sh installs them)",
)
def test_in_a_notebook_progress_is_on_and_the_tree_is_a_figure():
    import nbclient
    import nbformat

    code = (
        "import time, numpy as np, fprev\n"
        "def slow_sum(x):\n"
        "    time.sleep(0.004)\n"
        "    return np.sum(x)\n"
        "fprev.reveal(slow_sum, 300, confirm=0)"
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3").execute()
    outputs = notebook.cells[0].outputs
    stderr = "".join(o.get("text", "") for o in outputs if o.get("name") == "stderr")
    assert "fprev: revealing:" in stderr, outputs
    shown = [o for o in outputs if o.output_type == "execute_result"]
    assert shown and "<figure" in shown[0].data["text/html"], outputs
