"""attncoda verify: a rerun agrees with the committed results to the bit, and a changed number is found and named."""

import json

import pytest

from attncoda.face.chapter_run import run_chapter
from attncoda.face.verify import verify


@pytest.mark.slow
def test_verify_finds_no_difference_then_names_a_changed_number(tmp_path, monkeypatch):
    # a small-profile "record" of its own: written as an ordinary run, then named the record for verify to compare with
    run_chapter("theory", profile="small", parameters={"results_dir": str(tmp_path / "committed")}, output=tmp_path / "a.ipynb", progress=False)
    monkeypatch.setenv("ATTNCODA_RESULTS", str(tmp_path / "committed"))
    [report] = verify("theory", profile="small")
    assert report["ok"] and report["tolerance"] == 0.0 and report["compared"] > 10
    assert report["largest_absolute"]["difference"] == 0.0, "a pure-numpy chapter reruns to the same bits"
    path = tmp_path / "committed" / "theory" / "synthetic.json"
    data = json.loads(path.read_text())
    data["results"]["figure6"]["cosine_reversal_rate"] += 1e-9
    path.write_text(json.dumps(data))
    [report] = verify("theory", profile="small")
    assert not report["ok"] and report["largest_relative"]["path"] == "figure6.cosine_reversal_rate"
    assert report["differing"] == 1 and report["differing_counts"] == 0


@pytest.mark.slow
def test_baseline_kernels_reach_the_chapter_kernel_and_are_undone(tmp_path, monkeypatch):
    """--kernels baseline: the chapter's kernel runs with torch's kernels restricted (it reports DEFAULT) and a cache of its own."""
    import os

    from attncoda.face.verify import BASELINE_KERNELS

    monkeypatch.setenv("ATTNCODA_HOME", str(__import__("pathlib").Path(__file__).parents[2]))
    run_chapter("theory", profile="small", parameters={"results_dir": str(tmp_path / "committed")}, output=tmp_path / "a.ipynb", progress=False)
    monkeypatch.setenv("ATTNCODA_RESULTS", str(tmp_path / "committed"))
    before = {k: os.environ.get(k) for k in (*BASELINE_KERNELS, "ATTNCODA_CACHE")}
    [report] = verify("theory", profile="small", kernels="baseline")
    assert report["kernels"] == "baseline" and report["ok"] and report["differing"] == 0
    assert {k: os.environ.get(k) for k in before} == before
    import subprocess
    import sys

    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                           env={**os.environ, **BASELINE_KERNELS}, capture_output=True, text=True)
    assert probe.stdout.strip() == "DEFAULT", "torch honours ATEN_CPU_CAPABILITY=default"
