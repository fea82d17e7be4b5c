"""attncoda: attention rows as compositional data.

The math (this package's top level) is plain numpy; models and capture live in
submodules that import torch only when used.
"""

from .math.coda import (
    DEFAULT_EPS,
    Decomposition,
    EntropySplit,
    aitchison,
    aitchison_mean,
    as_composition,
    balance,
    closure,
    clr,
    content_concentration,
    content_distance,
    content_entropy,
    count_zeros,
    decompose,
    drop_sink,
    entropy,
    entropy_split,
    ilr_cosine,
    perturb,
    replace_zeros,
    sink_mass,
    temper,
)
from .math.metrics import METRICS, bhattacharyya, cosine, euclidean, fisher_rao, get_metric, hellinger, jensen_shannon, view
from .math.verdicts import Reversal, pairwise, reversal_rate, reversal_rates, sample_triples

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_EPS",
    "Decomposition",
    "EntropySplit",
    "aitchison",
    "aitchison_mean",
    "as_composition",
    "balance",
    "closure",
    "clr",
    "content_concentration",
    "content_distance",
    "content_entropy",
    "count_zeros",
    "decompose",
    "drop_sink",
    "entropy",
    "entropy_split",
    "ilr_cosine",
    "perturb",
    "replace_zeros",
    "sink_mass",
    "temper",
    "METRICS",
    "bhattacharyya",
    "cosine",
    "euclidean",
    "fisher_rao",
    "get_metric",
    "hellinger",
    "jensen_shannon",
    "view",
    "Reversal",
    "pairwise",
    "reversal_rate",
    "reversal_rates",
    "sample_triples",
]
