"""The protocol's constants, each with one home: the chapters glue them into their prose, and the book's methods page
(``book/methods.md``) takes its values from here."""

from __future__ import annotations

DEFAULT_EPS = 1e-6
"""Value given to an exact zero before a logarithm (methods: :ref:`methods-zeros`)."""
EPS_SWEEP = (1e-5, 1e-6, 1e-7)
"""Every probability-path result is recomputed at each of these ε."""
N_WINDOWS = 64
"""Windows of text per seed (N)."""
WINDOW_LENGTH = 128
"""Tokens per window (L)."""
BATCH_SIZE = 8
"""Windows per forward pass. It is part of every signature cache key, so one value, named here, serves every chapter
(a notebook's ``batch_size`` parameter defaults to it; tests/book/test_layers.py checks that)."""
SEEDS = (0, 1, 2)
"""Each seed draws its own text sample and its own triples."""
N_TRIPLES = 50_000
"""Head triples per seed for a reversal rate."""
TEMPERATURES = (0.5, 0.7, 1.5, 2.0)
"""Global logit temperatures of Table 8."""
TAXONOMY_KS = (4, 6, 8)
"""Cluster counts of Tables 5 and 6 (mean ARI over these)."""
CLUSTERING_KS = (4, 5, 6, 8)
"""Cluster counts of Table 9."""
PRUNE_SHARE = 0.2
"""Share of heads in Table 8's prune set (the most redundant)."""
SPARSITIES = (0.1, 0.2, 0.3)
"""Pruning sparsities of Table 10."""
SMALL_PART = 1e-6
"""Table 6's share column: parts below this carry how much of the squared content distance."""
COLLAPSE_FIRST_ROW = 8
"""Collapse means start at query row t = 8: earlier causal rows have at most 8 keys, so their entropy is capped near ln(t + 1)."""
SUITE_STEPS = 3500
"""Training steps of each model of the collapse chapter's optional natural-text suite."""
SUITE_BUDGET_MINUTES = 15
"""The most the collapse chapter's ladder and its control may take to train, together, on the 2-core machine the book is built on."""


LOAD_DTYPES = ("float32", "bfloat16", "float16")
"""Dtypes a model's weights are loaded in (a run's ``load_dtype``; ``--dtype``): float32 by default, the others for large
models on a GPU. Not the perplexity forward pass's precisions (:data:`PERPLEXITY_DTYPES`)."""

PERPLEXITY_DTYPES = ("bfloat16", "float32")
"""Precisions of the perplexity forward pass (the pruning chapter's ``dtype``): ``bfloat16`` under ``torch.autocast``
(3–6× faster matrix products on CPUs with AMX), or plain ``float32``. Not the dtypes a model is loaded in
(:data:`LOAD_DTYPES`)."""
