"""attncoda verify: a rerun agrees with the committed results to the bit, and a changed number is found and named."""

import json

import pytest

from attncoda.face.chapters import run_chapter
from attncoda.face.verify import verify


@pytest.mark.slow
def test_verify_finds_no_difference_then_names_a_changed_number(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_RESULTS", str(tmp_path / "committed"))
    run_chapter("theory", profile="small", parameters={"results_dir": str(tmp_path / "committed")}, output=tmp_path / "a.ipynb", progress=False)
    [report] = verify("theory", profile="small")
    assert report["ok"] and report["tolerance"] == 0.0 and report["compared"] > 10
    assert report["largest_absolute"]["difference"] == 0.0, "a pure-numpy chapter reruns to the same bits"
    path = tmp_path / "committed" / "theory" / "synthetic.json"
    data = json.loads(path.read_text())
    data["results"]["figure6"]["cosine_reversal_rate"] += 1e-9
    path.write_text(json.dumps(data))
    [report] = verify("theory", profile="small")
    assert not report["ok"] and report["largest_relative"]["path"] == "figure6.cosine_reversal_rate"
