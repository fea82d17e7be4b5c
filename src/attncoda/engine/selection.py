"""What a chapter's ``model`` parameter names: a group of the offline models, a preset, or one model.

The group words mean the same in every chapter (each chapter declares which it accepts, :class:`attncoda.face.chapters.Chapter`):

* ``defaults``: every offline model of the registry;
* ``encoders``: the offline encoders (bidirectional attention);
* ``causal``: the offline causal models;
* ``preset:NAME``: the preset's models (:mod:`.presets`), labelled as the paper labels them and written under their Hub ids.

Anything else is one model (a short name, Hub id, local folder or ``.gguf`` file), labelled and written under that name.
"""

from __future__ import annotations

from dataclasses import dataclass

GROUPS = {"defaults": "every offline model", "encoders": "the offline encoders", "causal": "the offline causal models"}
"""The group words and what each one measures."""


@dataclass(frozen=True)
class Choice:
    """One model a chapter measures: ``name`` is what the engine loads, ``label`` what the page calls it, ``result_name``
    the name its results file is written under, ``ref`` the name resolved (:func:`attncoda.engine.models.resolve`), once,
    when it is chosen; None when it cannot be (its own error is raised where it is measured, beside the others)."""

    name: str
    label: str
    result_name: str
    ref: object = None


def _resolved(name: str):
    """:func:`attncoda.engine.models.resolve` of ``name``, or None when it fails (the measurement names the failure)."""
    from ..base.errors import ModelError
    from .models import resolve

    try:
        return resolve(name)
    except ModelError:
        return None


def group_members(word: str) -> list[str]:
    """The offline models a group word names, in the registry's order (installed or not)."""
    from .registry import REGISTRY

    keep = {"defaults": lambda m: True, "encoders": lambda m: not m.causal, "causal": lambda m: m.causal}[word]
    return [name for name, entry in REGISTRY.items() if keep(entry)]


def choose(model: str, resolve: bool = True) -> list[Choice]:
    """The models ``model`` names (see the module docstring), in order, each resolved once (``resolve=False``: names and
    labels only, no reference)."""
    found = _resolved if resolve else (lambda name: None)
    if model in GROUPS:
        return [Choice(name, name, name, found(name)) for name in group_members(model)]
    if model.startswith("preset:"):
        from .presets import preset

        return [Choice(e.model_name(), e.label, e.hub_id, found(e.model_name())) for e in preset(model)]
    return [Choice(model, model, model, found(model))]


def names(model: str) -> list[str]:
    """What the engine loads for ``model``: :func:`choose`'s names (nothing resolved)."""
    return [c.name for c in choose(model, resolve=False)]


def installed_choices(model: str, resolve: bool = True) -> list[Choice]:
    """:func:`choose`, less the offline models of a group word that are not installed here (see :func:`installed_names`)."""
    from .registry import REGISTRY

    return [c for c in choose(model, resolve) if model not in GROUPS or REGISTRY[c.name].installed()]


def installed_names(model: str) -> list[str]:
    """:func:`names`, less the offline models of a group word that are not installed here: what a run can measure
    (:func:`attncoda.face.chapters.note_missing_models` has said which are left out; a recorded run refuses instead).
    One model named on its own is kept, installed or not, so that its own error reaches the reader."""
    return [c.name for c in installed_choices(model, resolve=False)]
