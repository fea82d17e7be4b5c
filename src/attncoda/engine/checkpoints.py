"""Checkpoint series: a model's states across training, named so that :func:`attncoda.engine.models.load_model` loads each.

* A Hugging Face id (``EleutherAI/pythia-160m``) walks its published revisions: by default
  :data:`PYTHIA_REVISIONS`, a log-spaced subset of Pythia's ``step0 … step143000``.
* A comma-separated list of local model folders is taken in the order given; a folder's training step
  is read from its ``training.json`` (the suite's checkpoints) or from trailing digits in its name
  (``step1000``, ``checkpoint-1000``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import ModelError

PYTHIA_REVISIONS = ("step0", "step1", "step2", "step4", "step8", "step16", "step32", "step64", "step128", "step256", "step512",
                    "step1000", "step2000", "step4000", "step8000", "step16000", "step32000", "step64000", "step143000")
"""Pythia's log-spaced early checkpoints (every power of two to 512), then 1k, 2k, 4k, …, 64k and the final 143k."""


@dataclass(frozen=True)
class Checkpoint:
    step: int | None  # training step, when known
    model: str  # what load_model takes: "org/name@revision" or a folder


def step_of(name: str) -> int | None:
    """The training step a checkpoint's name or folder states, else None.

    Examples
    --------
    >>> step_of("EleutherAI/pythia-70m@step1000"), step_of("runs/checkpoint-250"), step_of("final")
    (1000, 250, None)
    """
    path = Path(name)
    if path.is_dir() and (path / "training.json").exists():
        return int(json.loads((path / "training.json").read_text())["step"])
    found = re.search(r"(\d+)/?$", name)
    return int(found.group(1)) if found else None


def series(model: str, revisions=None) -> list[Checkpoint]:
    """The checkpoints ``model`` names, in training order (a ModelError in one line if any cannot be resolved)."""
    from .models import resolve

    parts = [p.strip() for p in model.split(",") if p.strip()]
    if len(parts) > 1:
        if revisions:
            raise ModelError("revisions apply to a Hub id; a list of folders is already a series (drop -p revisions)")
        for p in parts:
            if resolve(p).kind == "hub":
                raise ModelError(f"{p!r} in the list is not a local folder; pass either one Hub id or a comma-separated list of folders")
        return [Checkpoint(step_of(p), p) for p in parts]
    ref = resolve(model)
    if ref.kind != "hub":
        raise ModelError(f"{model!r} is one model, not a series; pass a Hub id with revisions or a comma-separated list of checkpoint folders")
    if ref.revision:
        raise ModelError(f"{model!r} names one revision; drop '@{ref.revision}' (the walk uses -p revisions)")
    names = list(revisions or PYTHIA_REVISIONS)
    return [Checkpoint(step_of(r), f"{ref.target}@{r}") for r in names]


def check_reachable(checkpoints: list[Checkpoint]) -> None:
    """Fail in one line, before any model loads, when a Hub series is neither in the local cache nor downloadable."""
    from .models import hub_reachable, resolve

    hub = [c for c in checkpoints if resolve(c.model).kind == "hub"]
    if not hub:
        return
    try:
        from huggingface_hub import try_to_load_from_cache

        ref = resolve(hub[0].model)
        cached = isinstance(try_to_load_from_cache(ref.target, "config.json", revision=ref.revision), str)
    except Exception:  # an old or missing huggingface_hub: decide by reachability alone
        cached = False
    if not cached and not hub_reachable():
        raise ModelError(
            f"cannot reach the Hugging Face Hub to download {hub[0].model} and it is not in the local cache; run where the Hub is "
            "reachable, or save the checkpoints as folders (model.save_pretrained) and pass them as a comma-separated list"
        )


def series_name(model: str) -> str:
    """A series' name for its results file: the Hub id, or the folder holding the first checkpoint (no path of this machine).

    Examples
    --------
    >>> series_name("EleutherAI/pythia-70m")
    'EleutherAI/pythia-70m'
    """
    parts = [p.strip() for p in model.split(",") if p.strip()]
    if len(parts) == 1:
        return parts[0]
    return Path(parts[0]).resolve().parent.name
