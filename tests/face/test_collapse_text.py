"""The collapse chapter's readings, computed from typed results: each sentence says what its numbers support."""

import pytest

from attncoda.base.provenance import first_commit
from attncoda.face import collapse_text
from attncoda.studies import collapse
from attncoda.studies.collapse_suite import Endpoint, Series


def _series(kind, sinks, hs, name=None, seed=0, spread=None, losses=(None, 4.0, 2.0), other=None):
    points = [{"step": s, "entropy": h, "content_entropy": 3.0, "sink_mass": m, "layers": {k: [0.0] for k in collapse.MEANS}, "train_loss": loss}
              for s, h, m, loss in zip((0, 16, 1000), hs, sinks, losses)]
    if other is not None:
        points = [{**p, "other_sink_mass": o, "sink_heads": float(o > 0.3)} for p, o in zip(points, other)]
    training = {"seed": seed, "parameters": 400_000, "training_seconds": 60.0, "steps": 1000, "batch": 16, "length": 64, "layers": 2, "heads": 2}
    return Series(name or f"{kind}-{seed}", kind, kind, points, collapse.trajectory_shares(points, spread), training)


def test_the_contrast_says_where_the_sink_grew_and_that_the_control_learned():
    grown = _series("ladder", (0.03, 0.03, 0.6), (4.0, 4.0, 2.0), other=(0.03, 0.1, 0.8))
    control = _series("control", (0.03, 0.03, 0.04), (4.0, 4.0, 3.9), other=(0.03, 0.03, 0.04))
    text = collapse_text.contrast_sentence([grown, control])
    assert "non-trigger sink mass ends at 0.80" in text and f"{grown.shown[1]:.2f}" in text
    assert "learned its task: its training loss fell from 4.00 to 2.00 nats" in text and "ended at 0.040" in text
    assert collapse_text.contrast_sentence([grown]) == ""
    dead = _series("control", (0.03, 0.03, 0.04), (4.0, 4.0, 3.9), losses=(None, 4.0, 3.9), other=(0.03, 0.03, 0.04))
    assert "did not clearly learn its task" in collapse_text.contrast_sentence([grown, dead]), "a run that learned nothing is no control"


def test_the_ladder_sentence_counts_sizes_where_every_seed_grew_a_sink():
    from attncoda.studies.collapse_suite import SizeShares

    share = {"values": [0.7, 0.8], "mean": 0.75, "low": 0.1, "high": 1.4}
    sizes = [SizeShares("1 × 1", "ladder", [0, 1], [0.6, 0.7], [1.0, 1.0], {"pooled (shown)": share}),
             SizeShares("2 × 2", "ladder", [0, 1], [0.6, 0.4], [0.5, 0.5], {"pooled (shown)": share})]
    text = collapse_text.ladder_sentence(sizes, {"Pythia-160M": 0.3}, 0.5)
    assert text.startswith("1 of the ladder's 2 sizes grew a sink in every seed") and ": 1 × 1." in text and "0.75 [0.10, 1.40]" in text
    assert "Pythia-160M 30%" in text and "the paper's numbers" in text
    assert collapse_text.size_rows(sizes)[1]["non-trigger sink mass, final (per seed)"] == "0.60, 0.40"


def test_the_answer_gives_each_size_its_share_whether_it_grew_and_the_papers_range():
    from attncoda.studies.collapse_suite import SizeShares

    share = {"values": [0.3, 0.4], "mean": 0.35, "low": 0.22, "high": 0.49}
    sizes = [SizeShares("size 1 × 1, width 128 (0.24 M parameters)", "ladder", [0, 1], [0.9, 0.96], [1.0, 1.0], {"pooled (shown)": share}),
             SizeShares("size 2 × 2, width 96 (0.25 M parameters)", "ladder", [0, 1], [0.28, 0.6], [0.5, 0.5], {"pooled (shown)": share}),
             SizeShares("control: random-table Backcopy, 1 × 1", "control", [0, 1], [0.06, 0.1], [0.0, 0.0], {"pooled (shown)": share})]
    text = collapse_text.answer_sentence(sizes, [], {"Pythia-70M": 0.30, "Pythia-1B": 0.95})
    assert "- 1 × 1: 0.35 [0.22, 0.49]; a sink grew in every seed (final non-trigger sink mass 0.90–0.96)." in text
    assert "- 2 × 2: 0.35 [0.22, 0.49]; a sink grew in 1 of 2 seeds (final non-trigger sink mass 0.28–0.60)." in text
    assert "- The control, which has no reason to grow a sink: 0.35 [0.22, 0.49] (final non-trigger sink mass 0.06–0.10)." in text
    assert text.endswith("- The paper: 30% to 95% on Pythia's checkpoints (other models, trained on text).")
    assert "larger" not in text and "higher" not in text, "the comparison with the paper is the scorecard's verdict, not a typed word"
    assert collapse_text.answer_sentence([], [], {"Pythia-70M": 0.3}) == ""
    from attncoda.studies.collapse_suite import Series

    own = Series("pythia-70m", "given", "given", [{"sink_mass": 0.1}, {"sink_mass": 0.45}], {"from_step0": {"share": 0.3}})
    assert collapse_text.answer_sentence([], [own], {"Pythia-70M": 0.3}).startswith(
        "- pythia-70m: 0.30 (from the first checkpoint; mean sink mass 0.100 → 0.450).")


def test_figure_5a_is_read_run_by_run_with_a_sign_test_over_runs():
    def run(seed, slope):
        pts = [{"heads": 4, "signature_sink_mass": 0.1 * k, "reversal": {"js": 0.1 + slope * k}} for k in range(6)]
        return Series(f"gpt2-2x2-seed{seed}", "g", "ladder", pts, {}, {"seed": seed})
    few = collapse_text.figure5a_sentence([run(0, 0.01), run(1, 0.01)])
    assert "gpt2-2x2" not in few and "2x2-seed0 1.00" in few and "cannot reach the 5 % level" in few
    many = collapse_text.figure5a_sentence([run(k, 0.01) for k in range(6)])
    assert "positive in 6 of 6 runs" in many and "p = 0.031" in many and "rises with sink mass within runs" in many
    assert "not independent" in many and "too few" not in many


def test_a_rejected_peak_is_reported_and_the_share_falls_back_to_step_zero():
    s = _series("text suite", (0.03, 0.03, 0.04), (4.0, 4.0005, 3.5), spread=0.01)
    assert s.shown[0] == "from_step0"
    assert "noise, not a peak" in collapse_text.trajectory_sentence([s])
    assert "noise" in collapse_text.share_rows([s])[0]["H peak at step"]


@pytest.mark.parametrize("low,high,verdict", [(0.1, 0.2, "below it"), (0.35, 0.5, "inside it"), (0.25, 0.4, "straddling its edge")])
def test_an_endpoint_is_placed_against_the_paper_s_range_on_its_interval(low, high, verdict):
    e = Endpoint("m", {"share": (low + high) / 2}, {"median": (low + high) / 2, "low": low, "high": high, "samples": [{}] * 5})
    assert f"m: {verdict}" in collapse_text.endpoint_sentence({"m": e}, 0.30, 0.95)


def test_the_search_sentence_counts_what_grew():
    trials = [{"label": "a", "run": {"task": "text"}, "step0": {"sink_mass": 0.02}, "final": {"sink_mass": 0.03}, "grown": False, "training_seconds": 60},
              {"label": "b", "run": {"task": "backcopy"}, "step0": {"sink_mass": 0.03}, "final": {"sink_mass": 0.7}, "grown": True, "training_seconds": 120}]
    text = collapse_text.search_sentence({"target": 0.3, "trials": trials})
    assert "1 of them grew" in text and "(b)" in text and "On natural text the final sink mass lay between 0.030 and 0.030" in text
    assert "not a ranking" in text  # one seed per configuration: no ranking is claimed
    seeds = [{"seed": k, "final": {"sink_mass": 0.5, "other_sink_mass": v}, "grown": v > 0.3, "training_seconds": 60} for k, v in enumerate((0.7, 0.2, 0.9))]
    trials[1] |= {"seeds": seeds, "grown_every_seed": False}
    text = collapse_text.search_sentence({"target": 0.3, "trials": trials})
    assert "(1 of them with 2 more seeds as well), in 4 min" in text and "b did so in 2 of 3 seeds (0.70, 0.20, 0.90)" in text
    assert collapse_text.above_target(trials[1]) == "in 2 of 3 seeds (0.70, 0.20, 0.90)" and collapse_text.above_target(trials[0]) == "no"


def test_first_commit_finds_a_committed_file_and_nothing_for_others():
    found = first_commit("data/predictor/v2.json")
    assert found is None or (len(found) == 2 and len(found[1]) == 10)  # a shallow clone may not hold the commit
    assert first_commit("no/such/file") is None


def test_the_paper_comparison_says_which_channel_carried_the_fall_from_the_shares():
    ladder = _series("ladder", (0.03, 0.03, 0.6), (4.0, 4.0, 2.0), other=(0.03, 0.1, 0.8))
    text = collapse_text.paper_comparison([ladder], {"Pythia-160M": 0.3, "Pythia-1B": 0.95})
    share = ladder.shown[1]
    assert ("the sink carries most" in text) == (share > 0.5) and "in every run the fall of H is carried by the content" not in text
    assert "A sink grew in every seed at 1 of the ladder's 1 sizes" in text and "cannot test whether that share rises with scale" in text


def test_a_real_but_tiny_peak_is_reported_with_its_rise_and_spread():
    s = _series("text suite", (0.02, 0.02, 0.04), (4.0480, 4.0481, 2.5), spread=1e-6)
    text = collapse_text.trajectory_sentence([s])
    assert "more than its spread across window samples" in text and "agree to two decimals" in text


def test_shares_that_are_undefined_are_not_said_to_agree():
    s = _series("ladder", (0.02, 0.02, 0.02), (4.0480, 4.0481, 4.0490), spread=1e-6)
    text = collapse_text.trajectory_sentence([s])
    assert "agree" not in text and "neither share is defined" in text


def test_a_run_whose_h_never_rose_is_not_said_to_have_risen():
    never = _series("ladder", (0.03, 0.03, 0.6), (4.0, 3.9999, 2.0), spread=0.01, other=(0.03, 0.1, 0.8))
    text = collapse_text.trajectory_sentence([never])
    assert "H never rose above its step-0 value" in text and "noise, not a peak" not in text and "rose above step 0 by less" not in text


def test_the_row_split_names_each_fall_and_types_no_comparison():
    from attncoda.studies.collapse_suite import Series

    rows = {"trigger": {"start": {"entropy": 4.0, "sink_mass": 0.02}, "end": {"entropy": 1.0, "sink_mass": 0.0}, "share": 0.01, "rows": 10},
            "other": {"start": {"entropy": 4.0, "sink_mass": 0.02}, "end": {"entropy": 0.2, "sink_mass": 0.9}, "share": 0.5, "rows": 30}}
    run = Series("gpt2-1x1-seed0", "g", "ladder", [{"sink_mass": 0.1}], {}, {}, rows)
    text = collapse_text.rows_sentence([run])
    assert "trigger rows (where the task needs attention): H fell by 3.00 nats" in text and "H fell by 3.80 nats" in text
    assert not any(word in text for word in ("smaller", "larger", "much"))
