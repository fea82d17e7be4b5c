"""A model's own architecture at its family's initialization: the start of the endpoint collapse share (methods: :ref:`methods-collapse`).

The class the trained model's config declares (:func:`architecture`) is built again from that config under
``torch.manual_seed(init_seed)``, so its weights are drawn by the family's own initializer (``post_init``); the
tokenizer is the trained model's. Its signatures are cached under a weights identity that hashes the trained model's identity,
the init seed and the library versions, so the untrained model is built only when they are missing.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from ..base.protocol import BATCH_SIZE, EPS_SWEEP, N_WINDOWS, WINDOW_LENGTH


def initialized(loaded, init_seed: int = 0):
    """A :class:`~attncoda.engine.models.LoadedModel` of the same config, built as :func:`architecture` and freshly
    initialized with ``init_seed``."""
    import torch

    from .models import LoadedModel

    config = loaded.model.config
    config._attn_implementation = "eager"
    torch.manual_seed(init_seed)
    model = architecture(loaded.model)(config)
    model.eval()
    info = replace(loaded.info, name=f"{loaded.info.name}@init{init_seed}", weights_sha256=init_identity(loaded.info.weights_sha256, init_seed),
                   source=f"{loaded.info.source}, re-initialized (seed {init_seed})", notes=(*loaded.info.notes, f"untrained: initialized with seed {init_seed}"))
    return LoadedModel(info=info, model=model, processor=loaded.processor)


def architecture(model) -> type:
    """The class an initialized twin is built as: the one its config declares (``config.architectures[0]``) when that
    class is of the loaded model's family, else the loaded model's own class.

    ``post_init`` draws the initial weights parameter by parameter, so the class decides them. A sentence-embedding
    encoder is loaded without the masked-LM head its config declares (its folder has no weights for the head), and its
    twin is still built with that head, as the config describes it: the twin does not depend on which weights a
    folder happens to ship.
    """
    import transformers

    declared = getattr(transformers, (getattr(model.config, "architectures", None) or [""])[0], None)
    family = next((c for c in type(model).__mro__ if c.__name__.endswith("PreTrainedModel")), None)
    if isinstance(declared, type) and family is not None and issubclass(declared, family):
        return declared
    return type(model)


def init_identity(trained_sha256: str, init_seed: int) -> str:
    """Weights identity of the initialized twin: a hash of the trained identity, the seed and the torch/transformers versions."""
    import torch
    import transformers

    text = f"init|{trained_sha256}|{init_seed}|torch {torch.__version__}|transformers {transformers.__version__}"
    return "init:" + hashlib.sha256(text.encode()).hexdigest()


def init_signatures(model: str, init_seed: int = 0, seed: int = 0, n: int = N_WINDOWS, length: int = WINDOW_LENGTH, corpus: str = "wikipedia",
                    split: str = "sample", batch_size: int = BATCH_SIZE, eps_values=EPS_SWEEP, refresh: bool = False):
    """Signatures of ``model``'s architecture at initialization, on the same windows as :func:`~attncoda.engine.signatures.get_signatures`."""
    from .cache import cache_or_compute
    from .signatures import SignatureSpec, cache_path, compute_spec, load, save

    spec = SignatureSpec(n, length, corpus, split, batch_size, tuple(eps_values))

    def path_for(job, sha, sink):
        return cache_path(spec.key(f"{model}@init{init_seed}", init_identity(sha, init_seed), sink, job))

    def make(loaded, job):
        return compute_spec(initialized(loaded, init_seed), spec, job)

    return cache_or_compute(model, (seed,), path_for, load, save, make, refresh=refresh)[0]
