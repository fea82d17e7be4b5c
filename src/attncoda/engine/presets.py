"""Model presets: named lists of models with their Hub ids, revisions, sink sets and modality.

``paper``: the models the paper's tables name. The paper reports ten models from five families, but
its text and tables name seven of them; those seven are listed (the other three cannot be identified
from the paper's text). Revisions are the Hub's ``main``; the commit actually downloaded is recorded
in every result (``weights_sha256 = hub:<commit>``).

A folder ``$ATTNCODA_MODEL_DIR/<org>--<name>`` saved with ``save_pretrained`` stands in for a Hub id
(a local mirror, for machines without the Hub).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

from ..base.errors import ModelError


@dataclass(frozen=True)
class PresetModel:
    label: str  # the paper's name for the model (its tables' row label)
    hub_id: str
    revision: str
    family: str
    modality: str  # "text" or "image"
    sink: str  # the paper's sink set
    gated: bool = False

    def as_dict(self) -> dict:
        return asdict(self)

    def model_name(self) -> str:
        """What to load: a local mirror folder when one exists, else ``hub_id@revision``."""
        mirror = os.environ.get("ATTNCODA_MODEL_DIR")
        if mirror:
            folder = Path(mirror) / self.hub_id.replace("/", "--")
            if (folder / "config.json").exists():
                return str(folder)
        return f"{self.hub_id}@{self.revision}"


PRESETS: dict[str, tuple[PresetModel, ...]] = {
    "paper": (
        PresetModel("GPT-2 (124M)", "openai-community/gpt2", "main", "gpt2", "text", "first"),
        PresetModel("BERT-base", "google-bert/bert-base-uncased", "main", "bert", "text", "cls_sep"),
        PresetModel("Llama-3.2-1B", "meta-llama/Llama-3.2-1B", "main", "llama", "text", "first", gated=True),
        PresetModel("Qwen2.5-1.5B", "Qwen/Qwen2.5-1.5B", "main", "qwen2", "text", "first"),
        PresetModel("Llama-3.2-3B", "meta-llama/Llama-3.2-3B", "main", "llama", "text", "first", gated=True),
        PresetModel("ViT-B/16", "google/vit-base-patch16-224", "main", "vit", "image", "first"),
        PresetModel("Pythia-70M", "EleutherAI/pythia-70m", "main", "gpt_neox", "text", "first"),
    )
}


def preset(name: str) -> tuple[PresetModel, ...]:
    """The models of a preset (``paper``); ModelError with the known names otherwise."""
    key = name.removeprefix("preset:")
    if key not in PRESETS:
        raise ModelError(f"unknown preset {key!r}; known: {', '.join(PRESETS)}")
    return PRESETS[key]
