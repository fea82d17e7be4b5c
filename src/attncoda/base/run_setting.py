"""How this process runs, as one typed value: set once, read where it applies, never parsed from the environment.

A chapter's kernel gets it from the ``run_setting`` parameter its runner (``attncoda run``, ``attncoda book``) injects
beside the reader's parameters, and from the notebook's own ``load_dtype`` and ``device_map``
(:func:`attncoda.face.opening.open_chapter` sets it); a command that runs no kernel (``attncoda audit``,
``attncoda signatures``) sets it from its arguments. A notebook opened in Jupyter or Colab, or run by plain papermill,
runs with the defaults: float32 on the CPU (or, in Colab, its GPU), no progress lines, and its results in a run
folder of its own.

Fields:

* ``load_dtype``, ``device_map``: how models are loaded (:data:`~attncoda.base.protocol.LOAD_DTYPES`; a device map for
  accelerate, ``None`` for the CPU);
* ``record``: the run writes the book's record (``data/results``) when its ``results_dir`` is empty;
* ``progress``: where progress lines go (:mod:`attncoda.base.progress`): a file the runner echoes, ``"-"`` for stderr,
  ``None`` for nowhere;
* ``cache_only``: every cache lookup must find its result (a miss is an error, not a computation);
* ``parameter_names``: the notebook's parameter names, read once by the runner (``()``: read the notebook).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

from .protocol import LOAD_DTYPES

LOAD_FIELDS = ("load_dtype", "device_map")
"""The fields that say how models load: a model chapter's notebook parameters of the same names."""

MACHINE_FIELDS = ("record", "progress", "cache_only", "parameter_names")
"""The fields a runner injects (a reader never sets them in the notebook)."""

PARAMETER = "run_setting"
"""The name of the notebook parameter a runner injects (a JSON object of :class:`RunSetting`'s machine fields)."""


@dataclass(frozen=True)
class RunSetting:
    """See the module docstring."""

    load_dtype: str = "float32"
    device_map: str | None = None
    record: bool = False
    progress: str | None = None
    cache_only: bool = False
    parameter_names: tuple = ()

    def __post_init__(self):
        if self.load_dtype not in LOAD_DTYPES:
            raise ValueError(f"load_dtype {self.load_dtype!r} is not a dtype this project loads; use one of {', '.join(LOAD_DTYPES)}")
        if self.device_map is not None and (not isinstance(self.device_map, str) or not self.device_map.strip()):
            raise ValueError(f"device_map must be a device map such as 'auto' or 'cuda' (None: the CPU); got {self.device_map!r}")
        if self.progress is not None and not isinstance(self.progress, str):
            raise ValueError(f"progress must be a file path, '-' or None; got {self.progress!r}")

    def load_parameters(self) -> dict:
        """The load fields that differ from the defaults, as notebook parameters (empty for float32 on the CPU)."""
        return {name: getattr(self, name) for name in LOAD_FIELDS if getattr(self, name) != getattr(RunSetting, name)}

    def machine_fields(self) -> dict:
        """What a runner injects as :data:`PARAMETER`: the fields a reader does not set in the notebook (the load options
        are the notebook's own parameters)."""
        return {name: list(getattr(self, name)) if name == "parameter_names" else getattr(self, name) for name in MACHINE_FIELDS}

    @classmethod
    def from_kernel(cls, namespace: dict) -> RunSetting:
        """The setting of a chapter's kernel: the injected :data:`PARAMETER` (absent outside a runner) and the notebook's
        ``load_dtype`` and ``device_map`` (an empty device map is the CPU). ValueError in one line for a bad value."""
        injected = namespace.get(PARAMETER) or {}
        if not isinstance(injected, dict) or set(injected) - set(MACHINE_FIELDS):
            raise ValueError(f"{PARAMETER} is set by attncoda run and attncoda book; leave it out of -p (got {injected!r})")
        return cls(load_dtype=namespace.get("load_dtype", "float32"), device_map=namespace.get("device_map") or None,
                   record=bool(injected.get("record", False)), progress=injected.get("progress"),
                   cache_only=bool(injected.get("cache_only", False)), parameter_names=tuple(injected.get("parameter_names") or ()))


_CURRENT = RunSetting()
"""The process's setting: a chapter's kernel's (:func:`attncoda.face.opening.open_chapter`) or a command's."""
_SCOPED: ContextVar[RunSetting | None] = ContextVar("attncoda_run_setting", default=None)
"""A setting for one block of one thread or task (:func:`using`): a Dask worker runs several lookups at once, in threads."""


def current() -> RunSetting:
    """The setting in effect here: the block's (:func:`using`, in this thread or task), else the process's (:func:`use`)."""
    scoped = _SCOPED.get()
    return _CURRENT if scoped is None else scoped


def use(setting: RunSetting) -> RunSetting:
    """Make ``setting`` the process's (see :func:`current`); returns the one it replaces."""
    global _CURRENT
    if not isinstance(setting, RunSetting):
        raise TypeError(f"expected a RunSetting, got {type(setting).__name__}")
    before, _CURRENT = _CURRENT, setting
    return before


@contextmanager
def using(setting: RunSetting | None = None, **changes):
    """Within the block, in this thread or task only, ``setting`` (or the current one with ``changes``) is in effect;
    what was in effect before returns after, also when the block raises, whatever other threads do meanwhile."""
    token = _SCOPED.set(replace(setting or current(), **changes))
    try:
        yield current()
    finally:
        _SCOPED.reset(token)
