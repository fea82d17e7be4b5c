"""The measurement chapter's sentences and tables, on the committed typed results: they say what the numbers hold."""

import json
from pathlib import Path

import numpy as np
import pytest

from attncoda.face import measurement_text as text
from attncoda.studies import predictor
from attncoda.studies.measurement_results import Measurement

ROOT = Path(__file__).parents[2]
PAPER = json.loads((ROOT / "data" / "paper" / "reference.json").read_text())


@pytest.fixture(scope="module")
def results():
    """The committed measurement of every default model, read back typed, with the predictors' verdicts as committed."""
    out = {}
    for path in sorted((ROOT / "data" / "results" / "measurement").glob("*.json")):
        data = json.loads(path.read_text())["results"]
        out[data["model"]] = Measurement.from_json(data)
    assert out, "no committed measurement results"
    return out


def test_table2_rows_give_every_model_its_rates_and_the_paper_s_row_where_it_has_one(results):
    rows = text.table2_rows(results, PAPER)
    assert [r["model"] for r in rows] == list(results)
    for row, r in zip(rows, results.values()):
        assert row["JS"] == f"{100 * r.summary.reversal['js'].mean:.1f} ± {100 * r.summary.reversal['js'].sd:.1f}"
        assert ("paper: cos / JS / Euclid. / Hell." in row) == (row["model"] in PAPER["table2"]["models"])
    paper = text.paper_table2_rows(PAPER)
    assert [r["model"] for r in paper] == list(PAPER["table2"]["models"])


def test_the_content_distance_never_reverses_and_the_sentence_says_so(results):
    assert "as it must" in text.content_sentence(results)
    assert all(e.reversal["content"].reversed == 0 for r in results.values() for e in r.per_seed)
    worst = max(r.summary.lemma1_max_relative_residual for r in results.values())
    assert f"{worst:.1e}" in text.lemma1_sentence(results)


def test_path_rows_take_the_largest_difference_over_the_classical_metrics(results):
    for row, r in zip(text.path_rows(results), results.values()):
        s = r.summary
        diffs = [abs(100 * (s.reversal[m].mean - s.probability_path.reversal[m].mean)) for m in text.TABLE2_METRICS]
        assert row["largest |difference| (points)"] == max(diffs)


def test_curve_deviations_summarise_as_the_page_says(results):
    curves, spec = predictor.load_all(version=1)
    devs = predictor.curve_deviations(curves, results)
    assert len(devs) == 3 * len(results)
    mean, largest = text.deviation_summary(devs)
    assert mean == pytest.approx(np.mean([abs(d["deviation"]) for d in devs])) and largest >= mean
    by_metric = text.deviation_by_metric(devs)
    assert by_metric.index("cosine") < by_metric.index("euclidean") < by_metric.index("js")


def test_predictor_verdicts_are_counted_and_explained(results):
    curves, v1 = predictor.load_all(version=1)
    for r in results.values():
        ev = predictor.evaluate_measured(curves, v1, r)
        assert ev["outcome"] in text.OUTCOMES and ev["why"].split(":")[0] in ("confirmed", "failed", "abstained")
        committed = r.predictor["v1"]
        assert (ev["outcome"], ev["why"]) == (committed["outcome"], committed["why"]), "the committed verdict is what the function gives"
    counts = text.outcome_counts(results, 1)
    assert sum(counts.values()) == len(results)
    assert text.outcomes_text(counts).count(",") == 1 and " and " in text.outcomes_text(counts)
    assert [row["outcome"] for row in text.outcome_rows(results, v1)] == [r.predictor["v1"]["outcome"] for r in results.values()]


def test_the_sweep_sentence_follows_the_runs(results):
    rows = text.sweep_rows(results)
    assert len(rows) == sum(len(r.per_seed) for r in results.values())
    sentence = text.sweep_sentence(results)
    if all(row["bit-identical"] for row in rows):
        assert f"in all {len(rows)} model-seed runs" in sentence
    zeros = sum(row["exact zeros met"] for row in rows)
    assert ("ε replaced nothing" in sentence) == (zeros == 0)


def test_the_differences_name_the_paper_s_numbers(results):
    curves, _ = predictor.load_all(version=1)
    sentence = text.differences_sentence(results, PAPER, predictor.curve_deviations(curves, results))
    assert PAPER["predictor"]["outcomes"] in sentence
    sinks, rates = text.rise_points(results)
    assert len(sinks) == len(rates) == len(results) and all(0 <= x <= 1 for x in rates)


def test_the_detail_tables_are_what_the_audits_chapter_committed(results):
    from attncoda.base.files import undefined_as_null

    for r in results.values():
        committed = json.loads((ROOT / "data" / "results" / "measurement-audits" / f"{r.result_name}.json").read_text())["results"]
        assert {k: committed[k] for k in ("table5", "table6", "table7", "table8")} == json.loads(json.dumps(undefined_as_null(r.first.detail_tables())))
    with pytest.raises(ValueError, match="no detail tables"):
        next(iter(results.values())).per_seed[1].detail_tables()


def test_detail_table_rows_and_sentences(results):
    from attncoda.face import detail_tables as tables

    t7 = tables.table7_rows(results)
    assert tables.aitchison_higher(t7) == sum(r.first.reversal[m].rate > r.first.arithmetic_reversal[m].rate
                                               for r in results.values() for m in tables.CLASSICAL)
    t5 = tables.table5_rows(results)
    assert tables.content_is_exact(t5) == "1 on every model"
    low, high = tables.classical_span(t5)
    assert low <= high and all(low <= row["JS"] <= high for row in t5)
    t8 = tables.table8_rows(results)
    assert tables.temperature_sentence(t8) == "exactly 0 flips and full retention on every model"
    assert tables.temperature_sentence([{**t8[0], "d_A^⊥ flip (max)": 0.01}]).startswith("NOT")
    note = tables.paper_hf_note(PAPER)
    unequal = [m for m, v in PAPER["table6"]["models"].items() if v["hellinger"] != v["fisher_rao"]]
    assert (str(len(unequal)) in note) if unequal else note.startswith("The paper's Table 6 prints equal")
    assert [row["model"] for row in tables.paper_table8_rows(PAPER)] == list(PAPER["table8"]["models"])
    assert "JS′ flip (max over τ)" in tables.paper_table8_rows(PAPER)[0]


def test_table6_sentence_sets_each_ranking_beside_the_paper_s(results):
    """Spearman's ρ over all pairs, nearest-neighbour agreement and cross-ARI, each ours beside the paper's, with no
    "alike"; a small-part share ten times the paper's largest is named as a mismatch."""
    from attncoda.face import detail_tables as tables

    rows = tables.table6_rows(results)
    sentence = tables.table6_sentence(rows, PAPER)
    theirs = PAPER["table6"]["models"].values()
    assert "alike" not in sentence
    assert f"the paper: {min(v['nn_agreement'] for v in theirs):.2f} to {max(v['nn_agreement'] for v in theirs):.2f}" in sentence
    assert f"{min(r['NN agr.'] for r in rows):.2f}" in sentence and f"{min(r['ρ'] for r in rows):.3f}" in sentence
    high = [{**row, "share < small (log path)": 0.725} for row in rows]
    assert "do not match the paper's: up to 0.725" in tables.table6_sentence(high, PAPER)
    low = [{**row, "share < small (log path)": 0.01} for row in rows]
    assert tables.table6_sentence(low, PAPER).endswith("Our small-part shares reach 0.010; the paper's, at most 0.046.")


def test_witness_values_count_the_models_with_a_triple(results):
    found = text.witness_triples(results)
    values = text.witness_values(results)
    assert values["t_found"] == (f"all {len(results)} of our models" if len(found) == len(results) else
                                 f"{len(found)} of our {len(results)} models (not in {', '.join(n for n in results if n not in found)})")
    assert "every one" not in values["t_found"]
    if found:
        assert values["t_share_min"] == min(100 * w["share_of_triples"] for w in found.values())
        assert all(w["sink"] == results[name].sink for name, w in found.items())
    for r in results.values():
        if r.first.witness:
            committed = json.loads((ROOT / "data" / "results" / "measurement-witness" / f"{r.result_name}.json").read_text())["results"]["witness"]
            assert committed == json.loads(json.dumps(r.first.witness.to_json()))


def test_each_seed_s_own_outcome_stands_beside_the_frozen_rule_s(results):
    """The frozen rule decides on the seed means and stays; beside it each seed is judged alone, and a model whose
    seeds disagree is called borderline (on the record, smollm2-135m under v1: failure, confirmation, failure)."""
    curves, spec = predictor.load_all(1)
    rows = {row["model"]: row for row in text.outcome_rows(results, spec, curves)}
    for name, r in results.items():
        seeds = predictor.per_seed_outcomes(curves, spec, r)
        assert len(seeds) == len(r.per_seed) and rows[name]["each seed"] == ", ".join(seeds)
        assert rows[name]["outcome"] == r.predictor["v1"]["outcome"] + (" (borderline)" if len(set(seeds)) > 1 else "")
    if "smollm2-135m" in results:
        assert rows["smollm2-135m"]["each seed"] == "failure, confirmation, failure"
        assert "smollm2-135m: failure, confirmation, failure" in text.borderline_sentence(results, spec, curves)
    assert "each seed" not in text.outcome_rows(results, spec)[0], "without the curves, the table is the frozen rule's alone"


def test_the_witness_table_shows_every_classical_verdict_flipping(results):
    """The witness triples' distances, kept and dropped: each classical metric names one head closer with the sink and
    the other without it (that is what makes the triple a witness)."""
    rows = text.witness_distance_rows(results)
    found = text.witness_triples(results)
    assert len(rows) == 3 * len(found) and found
    for row in rows:
        keep, drop = row["closer (keep → drop)"].split(" → ")
        assert {keep, drop} == {"q", "r"}, row


def test_the_layer_page_answers_its_question_with_seed_consistent_moves(results):
    """3.1's sentence counts only moves every seed agrees on, gives the paper's Table 2 range beside ours, and its table
    gives each model's counts (a transition counted for H falling is one where the sink rises)."""
    sentence = text.layer_answer_sentence(results, PAPER)
    assert "in all 3 seeds" in sentence and "9.1 % to 46.7 %" in sentence
    for row in text.layer_answer_rows(results):
        assert row["… and H falls"] <= row["sink mass rises in every seed"] <= row["transitions"]
