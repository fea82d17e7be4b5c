"""A training run interrupted at a chosen checkpoint, as a Ctrl-C or a killed process would stop it."""

import pytest

from attncoda.engine import training


def train_until_interrupted(monkeypatch, run, at_step: int, **options) -> None:
    """Train ``run`` (``options`` go to :func:`training.train`) until it is about to save the checkpoint of
    ``at_step``, where a KeyboardInterrupt stops it; the checkpoints before it are saved as usual."""
    real_save = training._save_checkpoint

    def stop(run_, step, *args):
        if step == at_step:
            raise KeyboardInterrupt
        real_save(run_, step, *args)

    with monkeypatch.context() as patch:
        patch.setattr(training, "_save_checkpoint", stop)
        with pytest.raises(KeyboardInterrupt):
            training.train(run, **options)
