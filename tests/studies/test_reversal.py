"""The reversal study: verdict tables, the ε sweep's check, Lemma 1's residual and the witness triple."""

import numpy as np

from attncoda.math.synthetic import witness
from attncoda.math.verdicts import sample_triples
from attncoda.studies import reversal


def test_lemma1_holds_to_rounding_on_random_signatures():
    rows = np.random.default_rng(0).dirichlet(np.ones(9), size=30)
    assert reversal.lemma1_residual(rows, (0,), 1e-6) < 1e-12
    assert reversal.lemma1_residual(rows, (0, 8), 1e-6) < 1e-12


def test_the_witness_triple_is_found_on_theorem_one_s_rows():
    rows = np.array(witness())
    triples = np.array([[0, 1, 2]])
    verdicts = reversal.verdict_table(rows, reversal.CLASSICAL, triples, (0,), 1e-6)
    found = reversal.find_witness_triple(rows, triples, verdicts, (0,), 1e-6)
    assert found["triple"] == [0, 1, 2] and found["share_of_triples"] == 1.0 and found["min_relative_gap"] > 0


def test_no_witness_where_no_triple_reverses():
    rows = np.random.default_rng(1).dirichlet(np.ones(6), size=8)
    rows[:, 0] = 0.0
    rows /= rows.sum(axis=1, keepdims=True)  # no sink mass at all: keep and drop agree
    triples = sample_triples(8, 50, 0)
    verdicts = reversal.verdict_table(np.clip(rows, 1e-300, None), reversal.CLASSICAL, triples, (0,), 1e-6)
    assert reversal.find_witness_triple(rows, triples, verdicts, (0,), 1e-6) is None


def test_the_eps_sweep_reports_identical_verdicts_and_counts_the_differences():
    rows = np.random.default_rng(2).dirichlet(np.ones(6), size=10)
    triples = sample_triples(10, 100, 0)
    tables = {e: reversal.verdict_table(rows, ("js", "content"), triples, (0,), e) for e in (1e-5, 1e-6)}
    out = reversal.eps_sweep(tables, 0, 1e-6)
    assert out["all_identical"] and out["max_differing_verdicts"] == {"js": 0, "content": 0}
    flipped = {e: {m: dict(v) for m, v in t.items()} for e, t in tables.items()}
    flipped[1e-5]["js"]["keep"] = -flipped[1e-5]["js"]["keep"]
    assert not reversal.eps_sweep(flipped, 0, 1e-6)["identical"]["js"]


def test_signature_sink_mass_is_the_mean_over_heads():
    rows = np.array([[0.5, 0.5], [0.9, 0.1]])
    assert reversal.signature_sink_mass(rows, (0,)) == 0.7
