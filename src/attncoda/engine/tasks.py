"""Bigram-Backcopy, the synthetic task on which Guo et al. (2024, "Active-Dormant Attention Heads") saw small
transformers grow a first-token sink: most next tokens follow a fixed bigram table, which an MLP can learn
without attention, so heads that are not needed go dormant and park their rows on the first token.

Two versions live here, sharing the copy rule (after a trigger at position ``t``, the next token copies the token
at ``t − 1``, the only place where attention is needed):

* :class:`CharacterBackcopy`, the task as Guo et al. define it: a character-level bigram table counted on a text
  corpus (Shakespeare), the corpus's three most frequent characters as triggers, the first token drawn from the
  character frequencies without the triggers, ``<bos>`` never generated. A trigger is a quarter of all tokens.
* :class:`Backcopy`, a random bigram table with rare triggers: a control, on which models learn (the bigram table
  and the copy) but no head has reason to go dormant.

**Backcopy (the random table).**

* **Tokens.** Id 0 is ``<bos>``, ids ``1 … triggers`` are trigger tokens, the rest ordinary tokens.
* **Bigram table.** For each ordinary or trigger token, ``successors`` allowed next tokens (ordinary ones),
  drawn once by ``numpy.random.default_rng(table_seed)``, each with a Dirichlet(1) weight.
* **Backcopy.** After a trigger at position ``t``, the next token copies the token at ``t − 1``: the only
  place where attention is needed.
* **Sequences.** ``[bos]``, a first token uniform over the ordinary ones, then the rules above.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

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


@lru_cache(maxsize=4)
def character_backcopy(corpus: str = "shakespeare", triggers: int = 3) -> CharacterBackcopy:
    """One :class:`CharacterBackcopy` per corpus and trigger count per process (its table is counted once)."""
    return CharacterBackcopy(corpus, triggers)


@dataclass(frozen=True)
class CharacterBackcopy:
    """Guo et al.'s Bigram-Backcopy on the characters of an offline corpus's sample split.

    * **Tokens.** Id 0 is ``<bos>``; ids ``1 … V`` are the corpus's characters in code-point order.
    * **Bigram table.** ``P(b | a) = count(a b) / Σ_c count(a c)``, counted over consecutive characters of each
      document; a character never followed by another (the last of the corpus) goes to the first-token law.
    * **Triggers.** The ``triggers`` most frequent characters.
    * **Sequences.** ``[bos]``, a first character from the unigram frequencies with the triggers removed, then: after
      a trigger, a copy of the token before it; otherwise a draw from the bigram row. ``<bos>`` is never generated.
    """

    corpus: str = "shakespeare"
    triggers: int = 3

    @cached_property
    def counts(self) -> tuple[list[str], np.ndarray]:
        """``(characters, bigram counts)``: the sorted characters of the corpus and the ``(V, V)`` count matrix."""
        from .corpus import split_documents

        codes = [np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32) for _, text in split_documents(self.corpus, "sample")]
        alphabet = np.unique(np.concatenate(codes))
        counts = np.zeros(len(alphabet) ** 2, dtype=np.int64)
        for doc in codes:
            ids = np.searchsorted(alphabet, doc)
            counts += np.bincount(ids[:-1] * len(alphabet) + ids[1:], minlength=len(alphabet) ** 2)
        return [chr(c) for c in alphabet], counts.reshape(len(alphabet), len(alphabet))

    @property
    def vocab(self) -> int:
        """``<bos>`` and every character."""
        return 1 + len(self.counts[0])

    @cached_property
    def unigram(self) -> np.ndarray:
        """Each token's share of the corpus's characters (``<bos>``: 0), length :attr:`vocab`."""
        _, counts = self.counts
        ends = counts.sum(axis=0) + counts.sum(axis=1)  # every character counted once as a bigram's first and once as its second
        return np.concatenate([[0.0], ends / ends.sum()])

    @cached_property
    def trigger_ids(self) -> np.ndarray:
        """The :attr:`triggers` most frequent tokens, most frequent first."""
        return np.argsort(-self.unigram, kind="stable")[: self.triggers]

    @cached_property
    def first_law(self) -> np.ndarray:
        """The first token's law: the unigram frequencies with ``<bos>`` and the triggers removed, renormalized."""
        p = self.unigram.copy()
        p[self.trigger_ids] = 0.0
        return p / p.sum()

    @cached_property
    def table(self) -> np.ndarray:
        """``(vocab, vocab)`` transition probabilities; row 0 (``<bos>``) is :attr:`first_law`, column 0 is zero."""
        _, counts = self.counts
        rows = counts.astype(np.float64)
        table = np.zeros((self.vocab, self.vocab))
        totals = rows.sum(axis=1, keepdims=True)
        table[1:, 1:] = np.divide(rows, totals, out=np.zeros_like(rows), where=totals > 0)
        table[1:][totals[:, 0] == 0] = self.first_law
        table[0] = self.first_law
        return table

    def sequences(self, n: int, length: int, rng: np.random.Generator) -> np.ndarray:
        """``(n, length)`` ids: ``[bos]`` then ``length − 1`` tokens of the task."""
        cumulative = np.cumsum(self.table, axis=1)
        cumulative[:, -1] = 1.0  # rounding must not leave a draw past the last token
        ids = np.empty((n, length), dtype=np.int64)
        ids[:, 0] = BOS_ID
        draws = rng.random((n, length))
        ids[:, 1] = np.searchsorted(np.cumsum(self.first_law), draws[:, 1], side="right").clip(max=self.vocab - 1)
        triggers = np.zeros(self.vocab, dtype=bool)
        triggers[self.trigger_ids] = True
        for t in range(2, length):
            prev = ids[:, t - 1]
            bigram = (draws[:, t, None] >= cumulative[prev]).sum(axis=1)
            ids[:, t] = np.where(triggers[prev], ids[:, t - 2], bigram)
        return ids

    def trigger_rows(self, ids: np.ndarray) -> np.ndarray:
        """Boolean ``(n, length)``: query rows whose token is a trigger (the rows that must look back to copy)."""
        return np.isin(ids, self.trigger_ids)
