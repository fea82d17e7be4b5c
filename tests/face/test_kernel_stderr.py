"""A chapter's kernel writes its own stderr to a log, not to the terminal (face/chapters.kernel_manager)."""

import nbformat
import papermill
import pytest


@pytest.mark.slow  # over 2.5 s on a 2-core AVX2-only machine: make test runs it, make check leaves it (held under 120 s in CI)
def test_what_the_kernel_process_prints_stays_out_of_the_terminal(tmp_path, capfd):
    from attncoda.face.chapters import KERNEL_ARGUMENTS, kernel_manager

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('import os\nos.write(2, b"kernel process stderr\\n")\nprint("cell output")')])
    source, log = tmp_path / "in.ipynb", tmp_path / "kernel.log"
    nbformat.write(nb, str(source))
    out = papermill.execute_notebook(str(source), str(tmp_path / "out.ipynb"), kernel_name="python3", progress_bar=False,
                                     extra_arguments=KERNEL_ARGUMENTS, kernel_manager_class=kernel_manager(log))
    assert "kernel process stderr" not in capfd.readouterr().err
    assert "kernel process stderr" in log.read_text()
    assert "cell output" in out.cells[0].outputs[0]["text"]  # the cell's own output still reaches the notebook
