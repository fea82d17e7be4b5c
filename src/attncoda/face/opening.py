"""A chapter's opening, in one call: ``chapter = open_chapter("pruning", globals())`` after the parameter cell.

It does what every chapter did by hand at its top:

* puts the run's setting in effect (:meth:`attncoda.base.run_setting.RunSetting.from_kernel`: the runner's injected
  ``run_setting``, and the notebook's ``load_dtype`` and ``device_map``), so the models load as the reader asked;
* in Colab, swaps the offline default model for one Colab can download (:func:`attncoda.face.colab.colab_model`);
* reads the parameters once, for the results' provenance (:func:`attncoda.face.results.run_parameters`), the paper's
  numbers and the start time;
* has every table the kernel displays write its notation as math (:func:`attncoda.face.report.typeset_tables`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class OpenChapter:
    """What a chapter's cells read after its opening: ``model`` (after Colab's swap), ``parameters`` (every parameter's
    value, for the provenance), ``paper`` (the paper's numbers), ``started`` (``time.time()`` at the opening)."""

    key: str
    model: str
    parameters: dict
    paper: dict
    started: float

    def elapsed(self) -> float:
        """Seconds since the opening."""
        return time.time() - self.started


def open_chapter(key: str, namespace: dict) -> OpenChapter:
    """Open chapter ``key`` in a kernel whose parameters are in ``namespace`` (the notebook's ``globals()``). Sets
    ``namespace["model"]`` to the model the chapter measures (see the module docstring); ValueError in one line for a
    bad ``load_dtype`` or ``device_map``."""
    from ..base import run_setting
    from .colab import colab_model
    from .report import typeset_tables
    from .results import paper_reference, run_parameters

    started = time.time()
    run_setting.use(run_setting.RunSetting.from_kernel(namespace))
    if "model" in namespace:
        namespace["model"] = colab_model(key, namespace["model"])
    typeset_tables()
    return OpenChapter(key, namespace.get("model", ""), run_parameters(key, namespace), paper_reference(), started)
