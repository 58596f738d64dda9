"""The three notebooks run top to bottom (nbclient, the venv's python3 kernel) and show plots."""

from __future__ import annotations

import os
import sys
import time

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = ["01-capacity-planning.ipynb", "02-policy-what-if-openb.ipynb", "03-teaching-lab.ipynb"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name, root, monkeypatch):
    path = root / "notebooks" / name
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and "What this notebook teaches" in first.source
    # The kernel is this interpreter (the venv's): jupyter_client maps the python3 kernel's
    # "python" to sys.executable; the check cell below makes sure.
    nb.cells.insert(1, nbformat.v4.new_code_cell(
        f"import sys, os\nassert os.path.realpath(sys.prefix) == {os.path.realpath(sys.prefix)!r}, sys.executable"))
    monkeypatch.setenv("GPUSLICE_NOTEBOOK_QUICK", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    start = time.monotonic()
    client.execute()
    elapsed = time.monotonic() - start
    images = sum(
        1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if "image/png" in o.get("data", {})
    )
    out_dir = os.environ.get("GPUSLICE_NOTEBOOK_OUT")  # keep the executed notebooks to look at
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        nbformat.write(nb, os.path.join(out_dir, name))
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    assert images >= 2, f"{name} shows {images} plots"
    assert elapsed < 240, f"{name} took {elapsed:.0f} s"
