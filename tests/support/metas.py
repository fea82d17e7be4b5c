"""Metadata for signatures and head distances that tests compute outside the engine's runs (an accumulator fed by hand)."""

from attncoda.engine.head_distances import HeadDistanceMeta
from attncoda.engine.signatures import SignatureMeta, WindowLayout


def signature_meta(length: int = 16, causal: bool = True, **fields) -> SignatureMeta:
    """A :class:`SignatureMeta` for ``length`` keys whose sink is key 0, with ``fields`` over the defaults."""
    base = dict(model="test", weights_sha256="0" * 64, default_sink="first", corpus="test", split="test", n=1, length=length, seed=0,
                batch_size=1, eps_values=[1e-6], protocol="test", model_info={"name": "test"}, sink_sets={"first": [0], "first4": [0, 1, 2, 3]},
                layout=WindowLayout(0, 0, False), causal=causal)
    return SignatureMeta(**{**base, **fields})


def head_distance_meta(**fields) -> HeadDistanceMeta:
    """A :class:`HeadDistanceMeta` with ``fields`` over the defaults."""
    base = dict(model="test", weights_sha256="0" * 64, corpus="test", split="test", n=1, length=5, seed=0, batch_size=1, protocol="test",
                model_info={"name": "test"}, sink=[0], cls=0, sep=[4], layers=1, heads_per_layer=1)
    return HeadDistanceMeta(**{**base, **fields})
