"""Property tests: the identities and invariances of the methods page's :ref:`methods-aitchison` and :ref:`methods-entropy`, for all inputs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import attncoda as ac
from strategies import positive_rows, rows_with_sink, sparse_rows


@given(rows_with_sink())
def test_lemma1_three_term_decomposition(case):
    rows, sink = case
    p, q = rows
    dec = ac.decompose(p, q, sink)
    assert dec.total**2 == pytest.approx(dec.within_sink**2 + dec.sink**2 + dec.content**2, rel=1e-9, abs=1e-9)
    assert dec.total == pytest.approx(ac.aitchison(p, q), rel=1e-12, abs=1e-12)
    assert dec.sink == pytest.approx(abs(ac.balance(p, sink) - ac.balance(q, sink)), rel=1e-12, abs=1e-12)
    if len(sink) == 1:
        assert dec.within_sink == 0.0


@given(rows_with_sink())
def test_content_distance_is_identical_under_keep_and_drop(case):
    rows, sink = case
    p, q = rows
    content = ac.get_metric("content")
    assert content(p, q, "keep", sink) == content(p, q, "drop", sink)  # bit for bit
    # and it is what its name says: the Aitchison distance between the dropped rows
    assert content(p, q, "keep", sink) == pytest.approx(ac.aitchison(ac.drop_sink(p, sink), ac.drop_sink(q, sink)), rel=1e-9, abs=1e-9)


@given(st.integers(3, 30), st.integers(0, 2**32 - 1))
def test_content_verdicts_never_flip(n_heads, seed):
    rng = np.random.default_rng(seed)
    heads = ac.closure(rng.dirichlet(np.full(12, 0.3), size=n_heads) + 1e-9)
    heads[:, 0] += rng.uniform(0, 5, n_heads)
    heads = ac.closure(heads)
    rev = ac.reversal_rate(heads, "content", n_triples=500, seed=seed)
    assert rev.reversed == 0


@given(sparse_rows(n_rows=3), st.sampled_from([(0,), (0, 1), (1, 2)]))
def test_entropy_identity(rows, sink):
    split = ac.entropy_split(rows, sink)
    assert np.max(np.abs(split.entropy - (split.binary + split.sink_term + split.content_term))) < 1e-12
    assert np.allclose(split.entropy, ac.entropy(rows), atol=1e-15, rtol=0)


@given(positive_rows(n_rows=3), st.integers(0, 2**32 - 1))
def test_aitchison_invariant_to_perturbation_and_permutation(rows, seed):
    p, q, _ = rows
    rng = np.random.default_rng(seed)
    w = np.exp(rng.uniform(-2, 2, p.shape[0]))
    perm = rng.permutation(p.shape[0])
    base = ac.aitchison(p, q)
    assert ac.aitchison(ac.perturb(p, w), ac.perturb(q, w)) == pytest.approx(base, rel=1e-9, abs=1e-9)
    assert ac.aitchison(p[perm], q[perm]) == pytest.approx(base, rel=1e-12, abs=1e-12)


@given(positive_rows(n_rows=2), st.floats(0.5, 4.0))
def test_temperature_divides_aitchison_distance(rows, tau):
    p, q = rows
    assert ac.aitchison(ac.temper(p, tau), ac.temper(q, tau)) == pytest.approx(ac.aitchison(p, q) / tau, rel=1e-9, abs=1e-9)


@given(rows_with_sink())
def test_subcompositional_dominance_of_aitchison(case):
    rows, sink = case
    p, q = rows
    assert ac.aitchison(ac.drop_sink(p, sink), ac.drop_sink(q, sink)) <= ac.aitchison(p, q) + 1e-9


@given(rows_with_sink(n_rows=1))
def test_concentration_ignores_the_sink(case):
    rows, sink = case
    p = rows[0]
    _, content = ac.math.coda.split_indices(sink, p.shape[0])
    boosted = p.copy()
    boosted[list(sink)] *= 7.0
    boosted = ac.closure(boosted)
    assert ac.content_concentration(boosted, sink) == pytest.approx(ac.content_concentration(p, sink), rel=1e-9, abs=1e-9)
    pi = ac.drop_sink(p, sink)
    lp = np.log(pi)
    pairwise = ((lp[:, None] - lp[None, :]) ** 2).sum() / (2 * len(content))
    assert ac.content_concentration(p, sink) == pytest.approx(pairwise, rel=1e-9, abs=1e-9)


@given(positive_rows(n_rows=4))
def test_aitchison_mean_is_closure_of_geometric_mean(rows):
    mean = ac.aitchison_mean(rows)
    expected = ac.closure(np.exp(np.log(rows).mean(axis=0)))
    assert np.allclose(mean, expected, rtol=1e-12, atol=1e-15)


@given(positive_rows(n_rows=2))
def test_hellinger_and_fisher_rao_are_monotone_in_each_other(rows):
    p, q = rows
    h, fr = ac.hellinger(p, q), ac.fisher_rao(p, q)
    bc = ac.bhattacharyya(p, q)
    assert h == pytest.approx(np.sqrt(max(1 - bc, 0)), abs=1e-12)
    assert fr == pytest.approx(2 * np.arccos(min(bc, 1)), abs=1e-12)


def test_classical_metrics_broadcast_over_leading_axes(rng):
    p = ac.closure(rng.random((4, 1, 7)))
    q = ac.closure(rng.random((1, 5, 7)))
    for name in ("cosine", "js", "euclidean", "hellinger", "fisher_rao", "aitchison"):
        assert ac.get_metric(name)(p, q).shape == (4, 5)
    assert ac.content_distance(p, q, (0, 3)).shape == (4, 5)
    assert ac.entropy_split(p).entropy.shape == (4, 1)


def test_replace_zeros_keeps_ratios_and_sums_and_small_parts(rng):
    x = ac.closure(np.array([[0.0, 0.5, 0.3, 2e-7, 0.2]]))
    y = ac.replace_zeros(x, 1e-6)
    assert y[0, 0] == 1e-6 and abs(y.sum() - 1) < 1e-15
    assert y[0, 1] / y[0, 2] == pytest.approx(0.5 / 0.3, rel=1e-14)
    assert y[0, 3] / y[0, 1] == pytest.approx(2e-7 / 0.5, rel=1e-14), "a small positive part is data, never floored"


@given(st.integers(2, 40), st.integers(0, 2**32 - 1), st.sampled_from([1e-5, 1e-6, 1e-7]), st.floats(1e-300, 1e-3))
def test_a_row_without_zeros_is_returned_bit_for_bit(d, seed, eps, tiny):
    rng = np.random.default_rng(seed)
    x = rng.dirichlet(np.full(d, 0.2), 3)
    x[:, -1] = tiny  # a part far below eps, yet not zero
    x = x / x.sum(axis=-1, keepdims=True)
    if np.any(x == 0):
        return
    y = ac.replace_zeros(x, eps)
    assert y.tobytes() == x.tobytes()
    assert ac.count_zeros(x) == 0


def test_content_entropy_survives_tiny_content_mass():
    p = np.array([1 - 3e-300, 1e-300, 2e-300])
    assert ac.content_entropy(p) == pytest.approx(-(1 / 3) * np.log(1 / 3) - (2 / 3) * np.log(2 / 3), rel=1e-12)
    assert np.isnan(ac.content_entropy(np.array([1.0, 0.0, 0.0])))


def test_every_public_math_function_documents_its_parameters_and_returns():
    """numpydoc sections, as the API page renders them (a function without parameters needs only Returns)."""
    import ast
    from pathlib import Path

    missing = []
    for path in sorted((Path(__file__).parents[2] / "src" / "attncoda" / "math").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                doc = ast.get_docstring(node) or ""
                needs = ["Returns\n-------"] + (["Parameters\n----------"] if node.args.args else [])
                if not all(n in doc for n in needs):
                    missing.append(f"{path.name}:{node.name}")
    assert not missing, f"add numpydoc Parameters/Returns to: {missing}"
