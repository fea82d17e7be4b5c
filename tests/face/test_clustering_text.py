"""The clustering chapter's sentences and tables say what the typed results hold, and only that."""

import json
from pathlib import Path

import numpy as np

from attncoda.face import clustering_text as text
from attncoda.studies.clustering import SampleSpread, Table5Entry
from clustering_fixtures import synthetic_clustering

PAPER = json.loads((Path(__file__).parents[2] / "data" / "paper" / "reference.json").read_text())


def test_a_spread_cell_is_median_and_range_or_a_dash():
    assert text.spread_cell(SampleSpread([0.1, 0.3, 0.2])) == "0.20 [0.10, 0.30]"
    assert text.spread_cell(SampleSpread([float("nan")] * 3)) == "—"


def test_set_sizes_and_the_sep_verdict_follow_the_head_sets():
    with_sep, without = synthetic_clustering("a"), synthetic_clustering("b", sep_members=False)
    rows = text.set_size_rows({"a": with_sep})
    assert rows[0]["[SEP] heads"] == 3 and rows[0]["heads"] == 12
    assert "a has 3 [SEP] heads" in text.sets_sentence({"a": with_sep})
    assert text.sep_verdict({"a": with_sep}).startswith("So the [SEP]-head family") and "a" in text.sep_verdict({"a": with_sep})
    assert text.sep_verdict({"b": without}).startswith("None of these models")
    assert "b has no [SEP] heads" in text.differences_sentence({"b": without}, PAPER)
    assert "b and c have no [SEP] heads" in text.differences_sentence({"b": without, "c": without}, PAPER)


def test_table9_rows_carry_every_number_as_median_and_range():
    r = synthetic_clustering("a")
    rows = text.table9_rows(r)
    assert [row["K"] for row in rows] == list(r.spread)
    assert rows[0]["d_A^⊥ cross"] == "1.00 [1.00, 1.00]"
    assert rows[0]["JS cross"] == text.spread_cell(r.spread[rows[0]["K"]]["cross_ari"]["js"])
    paper = text.paper_table9_rows(PAPER)
    assert paper[0]["JS cross"] == PAPER["table9"]["rows"][0]["js_cross"] and "js_cross" not in paper[0]


def test_the_ari_sentence_places_the_paper_against_our_range():
    r = synthetic_clustering("a")
    sentence = text.ari_sentence({"a": r}, PAPER)
    js = {k: per["cross_ari"]["js"] for k, per in r.spread.items()}
    places = {js[k].place(v) for k, v in text.paper_js(PAPER).items() if k in js}
    assert (f"lie {places.pop()} our range at every K" in sentence) if len(places) == 1 else "our range at K = " in sentence
    assert f"over {len(r.samples)} samples" in sentence


def test_the_answer_gives_each_models_ari_span_and_the_papers_values():
    r = synthetic_clustering("a")
    answer = text.answer_sentence({"a": r}, PAPER)
    js = {k: per["cross_ari"]["js"] for k, per in r.spread.items()}
    medians = [s.median for s in js.values()]
    assert f"On a, the median ARI between conventions is {min(medians):.2f} to {max(medians):.2f} over K = " in answer
    values = text.paper_js(PAPER).values()
    assert f"The paper reports {min(values):.2f} to {max(values):.2f} on BERT-base" in answer
    every = all(v < 1 for s in js.values() for v in s.finite)
    assert ("in every sample" in answer) == every and answer.startswith("Keeping or dropping the sink changes" if every else "Keeping or dropping the sink does not always")
    assert "[SEP] family cannot be checked" not in answer  # the synthetic model has [SEP] heads
    content = [v for per in r.spread.values() for v in per["cross_ari"]["content"].finite]
    assert ("same taxonomy under both conventions in every sample (ARI 1)" in answer) == (bool(content) and all(v == 1 for v in content))
    assert ("is below 1 in" in answer) != ("(ARI 1)" in answer), "the content clause comes from the content ARIs, one way or the other"
    assert "[SEP] family cannot be checked" in text.answer_sentence({"b": synthetic_clustering("b", sep_members=False)}, PAPER)


def test_the_differences_sentence_compares_k_by_k_and_never_pools():
    r = synthetic_clustering("a")
    sentence = text.differences_sentence({"a": r}, PAPER)
    js = {k: per["cross_ari"]["js"] for k, per in r.spread.items()}
    assert text._places(js, text.paper_js(PAPER)) in sentence
    assert "spans" not in sentence and "over samples and K" not in sentence


def test_a_range_states_its_coverage_and_the_held_out_check():
    """For n exchangeable samples a new one lands inside their least-to-greatest range with probability (n − 1)/(n + 1); a
    simulation of uniform draws agrees, and the sentence gives the held-out samples' count inside."""
    r = synthetic_clustering("a", seeds=range(6), held_out=(6, 7))
    n = len(r.samples)
    sentence = text.range_coverage_sentence({"a": r})
    assert f"probability {n - 1}/{n + 1} ({100 * (n - 1) / (n + 1):.1f} %)" in sentence
    assert f"{r.coverage.inside} of {r.coverage.checked} numbers on a" in sentence and "2 samples" in sentence
    draws = np.random.default_rng(0).random((20_000, n + 1))
    inside = (draws[:, -1] > draws[:, :-1].min(axis=1)) & (draws[:, -1] < draws[:, :-1].max(axis=1))
    assert abs(inside.mean() - (n - 1) / (n + 1)) < 0.01
    assert "no sample was held out" in text.range_coverage_sentence({"a": synthetic_clustering("a")})


def test_jaccard_sentence_names_only_non_empty_sets():
    r = synthetic_clustering("a")
    sentence = text.jaccard_sentence({"a": r})
    assert "a's sep heads" in sentence
    empty = [s for s in text.HEAD_SETS if not any(per["jaccard"]["js"][s]["keep"].finite for per in r.spread.values())]
    assert all(f"a's {s} heads" not in sentence for s in empty)


def test_table5_rows_and_the_classical_span_leave_out_the_content_column():
    t5 = {"m": Table5Entry("m", {"cosine": -0.2, "js": 0.4, "euclidean": 0.1, "content": 1.0}, {}, "0" * 64)}
    rows = text.table5_rows(t5)
    assert rows == [{"model": "m", "1 − cos": -0.2, "JS": 0.4, "Euclid.": 0.1, "d_A^⊥": 1.0}]
    assert text.classical_span(rows) == (-0.2, 0.4)
    paper = text.paper_table5_rows(PAPER)
    values = [v for row in PAPER["table5"]["models"].values() for v in row.values()]
    assert text.classical_span(paper) == (min(values), max(values))
    assert np.isfinite(text.classical_span(paper)).all()
