"""The paper's preset runs end to end on tiny stand-ins, with the Hub unreachable: one clear line per missing model."""

import json

import nbformat
import pytest

from attncoda.base.errors import ChapterError, ModelError
from attncoda.engine.presets import PRESETS, preset
from attncoda.face.chapter_run import run_chapter


def test_the_paper_preset_names_the_papers_models():
    labels = {m.label for m in PRESETS["paper"]}
    assert {"GPT-2 (124M)", "BERT-base", "Llama-3.2-1B", "Qwen2.5-1.5B", "Llama-3.2-3B", "ViT-B/16", "Pythia-70M"} == labels
    assert {m.modality for m in PRESETS["paper"]} == {"text", "image"}
    assert all(m.gated == m.hub_id.startswith("meta-llama/") for m in PRESETS["paper"])
    with pytest.raises(ModelError, match="unknown preset 'nope'; known: paper"):
        preset("nope")
    with pytest.raises(ChapterError, match="--preset runs the measurement chapter"):
        run_chapter("clustering", model="preset:paper")


@pytest.mark.slow
def test_preset_on_stand_ins_measures_what_it_can_and_names_what_it_cannot(tmp_path, monkeypatch):
    from tiny_models import save_tiny

    mirror = tmp_path / "mirror"
    for m in PRESETS["paper"]:
        if m.label != "Llama-3.2-3B":  # left out: the Hub is unreachable, so it cannot be had
            save_tiny(m.family, mirror / m.hub_id.replace("/", "--"))
    monkeypatch.setenv("ATTNCODA_MODEL_DIR", str(mirror))
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = run_chapter("measurement", model="preset:paper", parameters={"results_dir": str(tmp_path / "results")},
                      output=tmp_path / "m.ipynb", profile="small", progress=False)
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    missing = [line for line in printed.splitlines() if line.startswith("not measured:")]
    assert len(missing) == 1 and "Llama-3.2-3B" in missing[0] and "cannot reach the Hugging Face Hub" in missing[0] and "huggingface-cli login" in missing[0]
    written = sorted(p.stem for p in (tmp_path / "results" / "measurement").glob("*.json"))
    assert len(written) == 6 and "google--vit-base-patch16-224" in written and "openai-community--gpt2" in written
    gpt2 = json.loads((tmp_path / "results" / "measurement" / "openai-community--gpt2.json").read_text())
    assert gpt2["results"]["summary"]["reversal"]["content"]["mean"] == 0.0
