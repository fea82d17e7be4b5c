"""Bigram-Backcopy, the synthetic task on which Guo et al. (2024, "Active-Dormant Attention Heads") saw small
transformers grow a first-token sink: most next tokens follow a fixed bigram table, which an MLP can learn
without attention, so heads that are not needed go dormant and park their rows on the first token.

* **Tokens.** Id 0 is ``<bos>``, ids ``1 … triggers`` are trigger tokens, the rest ordinary tokens.
* **Bigram table.** For each ordinary or trigger token, ``successors`` allowed next tokens (ordinary ones),
  drawn once by ``numpy.random.default_rng(table_seed)``, each with a Dirichlet(1) weight.
* **Backcopy.** After a trigger at position ``t``, the next token copies the token at ``t − 1``: the only
  place where attention is needed.
* **Sequences.** ``[bos]``, a first token uniform over the ordinary ones, then the rules above.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

BOS_ID = 0


@dataclass(frozen=True)
class Backcopy:
    """The task's sizes: ``vocab`` ids in all (``<bos>`` and the triggers included)."""

    vocab: int = 64
    triggers: int = 3
    successors: int = 8
    table_seed: int = 0

    def __post_init__(self):
        if not 1 <= self.triggers < self.vocab - 2 or not 1 <= self.successors <= self.vocab - 1 - self.triggers:
            raise ValueError(f"Backcopy needs 1 <= triggers < vocab - 2 and 1 <= successors <= ordinary tokens, got {self}")

    @property
    def ordinary(self) -> np.ndarray:
        return np.arange(1 + self.triggers, self.vocab)

    @cached_property
    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """``(next_ids, cumulative_weights)``, each ``(vocab, successors)``; row ``v`` lists the tokens that may follow ``v``.
        Triggers are reachable: every third row of the table may lead to one."""
        rng = np.random.default_rng(self.table_seed)
        choices = np.concatenate([np.arange(1, 1 + self.triggers), self.ordinary])
        nxt = np.stack([rng.choice(choices, self.successors, replace=False) for _ in range(self.vocab)])
        weights = rng.dirichlet(np.ones(self.successors), size=self.vocab)
        return nxt, np.cumsum(weights, axis=1)

    def sequences(self, n: int, length: int, rng: np.random.Generator) -> np.ndarray:
        """``(n, length)`` ids: ``[bos]`` then ``length − 1`` tokens of the task.

        Examples
        --------
        >>> task = Backcopy()
        >>> ids = task.sequences(4, 32, np.random.default_rng(0))
        >>> ids.shape, bool((ids[:, 0] == 0).all())
        ((4, 32), True)
        >>> after = task.trigger_rows(ids)[:, 1:-1]          # a trigger at t - 1 ...
        >>> bool(np.all(ids[:, 2:][after] == ids[:, :-2][after]))  # ... makes token t a copy of token t - 2
        True
        """
        nxt, cum = self.table
        ids = np.empty((n, length), dtype=np.int64)
        ids[:, 0] = BOS_ID
        ids[:, 1] = rng.choice(self.ordinary, n)
        draws = rng.random((n, length))
        for t in range(2, length):
            prev = ids[:, t - 1]
            pick = (draws[:, t, None] > cum[prev]).sum(axis=1).clip(max=self.successors - 1)
            bigram = nxt[prev, pick]
            copy = ids[:, t - 2]
            ids[:, t] = np.where(prev <= self.triggers, copy, bigram)
        return ids

    def trigger_rows(self, ids: np.ndarray) -> np.ndarray:
        """Boolean ``(n, length)``: query rows whose token is a trigger (the rows that must look back to copy)."""
        return (ids >= 1) & (ids <= self.triggers)
