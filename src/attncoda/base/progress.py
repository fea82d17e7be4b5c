"""Progress a reader cares about (which model, which seed, how many windows, how long still), sent to the terminal.

A chapter runs in a notebook kernel whose output lands in the page, so long steps do not print there.
``attncoda run`` and ``attncoda book`` name a file in the run's setting (:mod:`attncoda.base.run_setting`,
``progress``) and echo every line written to it; without one :func:`report` is silent.
"""

from __future__ import annotations

import time


def report(message: str) -> None:
    """Append one line of progress to the run setting's ``progress`` file, or write it to stderr when that is ``-``
    (``attncoda audit`` and ``attncoda signatures``, which run no kernel); nothing happens when it is None."""
    from .run_setting import current
    from .terminal import visible

    path = current().progress
    message = visible(message)  # a model's name in it cannot fake a line or recolour the terminal
    if path == "-":
        import sys

        print(f"  {message}", file=sys.stderr, flush=True)
    elif path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(message + "\n")


class Steps:
    """Counts ``total`` steps of one job and reports each with the time left (from the mean step so far).

    Examples
    --------
    >>> steps = Steps("signatures tiny seed 0", 4)
    >>> steps.line(2, now=steps.started + 10.0)
    'signatures tiny seed 0: 2/4, about 10 s left'
    """

    def __init__(self, what: str, total: int):
        self.what, self.total, self.started = what, int(total), time.perf_counter()

    def line(self, done: int, now: float | None = None) -> str:
        elapsed = (now if now is not None else time.perf_counter()) - self.started
        left = elapsed / done * (self.total - done) if done else float("nan")
        tail = f", about {left:.0f} s left" if done and done < self.total else (f", done in {elapsed:.0f} s" if done == self.total else "")
        return f"{self.what}: {done}/{self.total}{tail}"

    def step(self, done: int) -> None:
        report(self.line(done))
