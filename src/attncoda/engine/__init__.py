"""The engine: the only layer that knows torch and transformers.

It resolves and loads models (:mod:`.models`, :mod:`.registry`), cuts the corpus into
windows (:mod:`.corpus`), captures attention (:mod:`.capture`) and reduces it to
signatures and row statistics, cached on disk (:mod:`.signatures`). It never
imports the studies or the face.
"""


def set_threads(threads: int) -> None:
    """Torch's intra-op thread count for this process, so that the face sets it without importing torch."""
    import torch

    torch.set_num_threads(threads)
