"""Bad input gets a ValueError that names the problem; nothing is silently clipped."""

import numpy as np
import pytest

import attncoda as ac

GOOD = np.array([0.7, 0.2, 0.1])


@pytest.mark.parametrize(
    "row, message",
    [
        (np.array([0.7, -0.1, 0.4]), "negative"),
        (np.array([0.7, np.nan, 0.3]), "NaN"),
        (np.array([0.7, np.inf, 0.3]), "NaN or infinite"),
        (np.array([0.7, 0.2, 0.2]), "do not sum to 1"),
        (np.array([]), "at least one part"),
    ],
)
def test_bad_rows_are_rejected(row, message):
    for call in (lambda: ac.aitchison(row, row), lambda: ac.entropy(row), lambda: ac.cosine(row, row), lambda: ac.drop_sink(row)):
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize(
    "sink, message",
    [((3,), "out of range"), ((-4,), "out of range"), ((), "empty"), ((0, 0), "repeats"), ((0, 1, 2), "content set is empty")],
)
def test_bad_sink_sets_are_rejected(sink, message):
    with pytest.raises(ValueError, match=message):
        ac.content_distance(GOOD, GOOD, sink)
    with pytest.raises(ValueError, match=message):
        ac.entropy_split(GOOD, sink)


def test_negative_sink_index_counts_from_the_end():
    assert ac.sink_mass(GOOD, (-1,)) == pytest.approx(0.1)


def test_clr_refuses_zeros_and_says_what_to_do():
    with pytest.raises(ValueError, match="replace_zeros"):
        ac.clr(np.array([0.5, 0.5, 0.0]))


def test_drop_sink_refuses_all_sink_rows():
    with pytest.raises(ValueError, match="all its mass on the sink"):
        ac.drop_sink(np.array([1.0, 0.0, 0.0]))


def test_zero_replacement_guards():
    with pytest.raises(ValueError, match="too large"):
        ac.replace_zeros(GOOD, 0.5)
    with pytest.raises(ValueError, match="positive"):
        ac.replace_zeros(GOOD, -1.0)


def test_other_parameters():
    with pytest.raises(ValueError, match="temperature"):
        ac.temper(GOOD, 0.0)
    with pytest.raises(ValueError, match="unknown metric"):
        ac.get_metric("manhattan")
    with pytest.raises(ValueError, match="unknown convention"):
        ac.view(GOOD, "sideways")
    with pytest.raises(ValueError, match="different numbers of parts"):
        ac.cosine(GOOD, np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="at least 3 heads"):
        ac.sample_triples(2, 10, 0)
    with pytest.raises(ValueError, match="zero total"):
        ac.closure(np.zeros(3))


def test_rows_within_tolerance_are_accepted():
    assert np.isfinite(ac.aitchison(GOOD * (1 + 5e-7), GOOD))


TWO = np.array([0.6, 0.4])
PAIR_FUNCTIONS = {
    "aitchison": lambda p, q: ac.aitchison(p, q),
    "ilr_cosine": lambda p, q: ac.ilr_cosine(p, q),
    "decompose": lambda p, q: ac.decompose(p, q),
    "content_distance": lambda p, q: ac.content_distance(p, q),
    **{name: (lambda p, q, m=m: m(p, q)) for name, m in ac.METRICS.items()},
}


@pytest.mark.parametrize("name", list(PAIR_FUNCTIONS))
def test_rows_of_different_lengths_give_one_clear_line(name):
    """The shapes a reader gets wrong: a 3-part row against a 2-part row, and stacks that do not broadcast."""
    with pytest.raises(ValueError, match="different numbers of parts"):
        PAIR_FUNCTIONS[name](GOOD, TWO)
    with pytest.raises(ValueError, match="do not broadcast"):
        PAIR_FUNCTIONS[name](np.tile(GOOD, (2, 1)), np.tile(GOOD, (3, 1)))


def test_scalars_and_unknown_names_are_refused_clearly():
    with pytest.raises(ValueError, match="at least one part"):
        ac.entropy(0.5)
    with pytest.raises(ValueError, match="unknown metric 'jsd'; known: cosine"):
        ac.get_metric("jsd")
    with pytest.raises(ValueError, match="unknown convention"):
        ac.cosine  # noqa: B018  (the function itself is fine)
        ac.view(GOOD, "dropped")
