"""A chapter's model word is resolved once, when its models are chosen: each choice carries its resolved reference."""

import pytest

from attncoda.engine import models, selection


def test_each_choice_is_resolved_once_and_carries_its_reference(monkeypatch):
    calls = []
    real = models.resolve
    monkeypatch.setattr(models, "resolve", lambda name: calls.append(name) or real(name))
    chosen = selection.choose("defaults")
    assert [c.name for c in chosen] == selection.group_members("defaults") and calls == [c.name for c in chosen]
    assert all(c.ref == real(c.name) for c in chosen)


def test_a_model_that_cannot_be_resolved_is_chosen_without_a_reference(tmp_path):
    missing = str(tmp_path / "nowhere.gguf")
    (choice,) = selection.choose(missing)
    assert choice.name == missing and choice.ref is None  # its own error comes where it is measured, beside the others


def test_the_cache_uses_the_reference_it_is_given(monkeypatch, tmp_path):
    """cache_or_compute resolves a name only when no reference comes with it."""
    from attncoda.engine.cache import cache_or_compute

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    monkeypatch.setattr(models, "resolve", lambda name: pytest.fail(f"{name} resolved again"))
    ref = models.ModelRef("registry", "minilm-l6", None)
    done = cache_or_compute("minilm-l6", (0,), lambda job, sha, sink: tmp_path / f"{job}.json", lambda path: "cached", None, None, ref=ref)
    assert done == ["cached"]
