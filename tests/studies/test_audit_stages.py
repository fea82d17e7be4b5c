"""The staged audit: two looks at the default sample, the level split over them, the early look's margin measured,
and the rule's error rate simulated on synthetic models whose true rates are known."""

import json
from dataclasses import replace

import numpy as np
import pytest

from attncoda.studies import audit_stages
from attncoda.studies.audit import AuditReport, ReversalReading, advice_rule


def _report(interval, threshold=0.075):
    base = AuditReport("m", "llama", True, 8, 128, 64, [0, 1, 2], "logit", "js", "JS", {"name": "first", "keys": [0]}, True,
                       [{"key": 0, "mean_attention": 0.6}], 0.5, 0.5, ReversalReading(sum(interval) / 2, interval, "", [0.1], 100), None,
                       0.2, {"bit_identical": True, "exact_zeros": 0})
    return replace(base, threshold=threshold)


def _fake_audit(intervals):
    """An ``audit`` whose interval at each look is the next of ``intervals``, with the advice its margin allows."""
    calls = []

    def audit(sigs, maps=None, level=0.95, margin=0.0, **options):
        calls.append({"windows": sigs, "level": level, "margin": margin})
        report = _report(intervals[len(calls) - 1])
        report = replace(report, reversal=replace(report.reversal, level=level))
        return replace(report, advice=advice_rule(report.reversal, report.threshold, margin))

    return audit, calls


@pytest.mark.parametrize("intervals, looks, advice", [
    ([(0.20, 0.25)], 1, "matters"),                 # clear at the first look: a quarter of the windows read
    ([(0.00, 0.03)], 1, "small"),
    ([(0.07, 0.09), (0.08, 0.10)], 2, "matters"),   # straddles at first: the whole sample decides
    ([(0.07, 0.09), (0.06, 0.09)], 2, "undecided"),
    ([(0.08, 0.09), (0.081, 0.09)], 2, "matters"),  # clears the threshold, but not by the early margin
])
def test_the_audit_stops_at_the_first_look_that_takes_a_side(monkeypatch, intervals, looks, advice):
    audit, calls = _fake_audit(intervals)
    monkeypatch.setattr("attncoda.studies.audit.audit", audit)
    monkeypatch.setattr(audit_stages, "stage_margin", lambda windows: 0.01 if windows < 64 else 0.0)
    report = audit_stages.staged(lambda windows: (windows, None), [16, 64], {})
    assert report.advice == advice and len(report.stages) == looks == len(calls)
    assert [c["windows"] for c in calls] == [16, 64][:looks] and {c["level"] for c in calls} == {0.975}
    assert calls[0]["margin"] == 0.01 and (looks == 1 or calls[1]["margin"] == 0.0)
    assert ("stopped at look 1 of 2" in report.stopped) == (looks == 1) and ("--full" in report.stopped) == (looks == 1)


def test_one_look_is_the_whole_sample_at_95_percent(monkeypatch):
    audit, calls = _fake_audit([(0.07, 0.09)])
    monkeypatch.setattr("attncoda.studies.audit.audit", audit)
    report = audit_stages.staged(lambda windows: (windows, None), [64], {})
    assert calls == [{"windows": 64, "level": 0.95, "margin": 0.0}] and report.stopped.startswith("one look")


def test_a_missing_margin_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(audit_stages, "data_file", lambda name: tmp_path / name)
    with pytest.raises(ValueError, match="holds no margin for 16 windows; run python -m attncoda.studies.audit_stages bias, or pass --full"):
        audit_stages.stage_margin(16)
    assert audit_stages.stage_margin(64) == 0.0


def test_the_committed_margin_is_the_largest_measured_difference():
    data = json.loads(audit_stages.data_file(audit_stages.BIAS_FILE).read_text())
    assert len(data["models"]) >= 5, "measured on every default model"
    for windows in map(str, audit_stages.STAGES[:-1]):
        assert data["margin"][windows] == max(abs(m["difference " + windows]) for m in data["models"].values())
        assert audit_stages.stage_margin(int(windows)) == data["margin"][windows]


def test_the_simulated_error_rate_stays_at_or_below_the_level():
    """The committed simulation: on every synthetic model near the threshold, the staged rule advised the wrong side
    at most 5 % of the time; and it is the simulation this code runs (a few audits of one model, rerun here)."""
    data = json.loads(audit_stages.data_file(audit_stages.SIMULATION_FILE).read_text())
    assert data["look_level"] == audit_stages.look_level(2) and len(data["configs"]) == len(audit_stages.SIMULATED)
    truths = sorted(c["true_rate"] for c in data["configs"])
    assert truths[0] < data["threshold"] < truths[-1], "synthetic models on both sides of the threshold"
    assert all(c["error_rate"] <= 1 - audit_stages.CONFIDENCE for c in data["configs"]), data["configs"]
    small = audit_stages.simulate([(0.08, 0.1)], audits=5, truth_draws=20)
    assert small["configs"][0]["audits"] == 5 and 0 <= small["configs"][0]["error_rate"] <= 1


def test_decide_is_the_audit_s_advice_on_seed_rates():
    rates = np.array([0.14, 0.16, 0.15])  # 97.5 % t interval 12.5-17.5 %
    assert audit_stages.decide(rates, 0.075, 0.975) == "matters"
    assert audit_stages.decide(rates, 0.075, 0.975, margin=0.06) == "undecided"


@pytest.mark.parametrize("intervals, bound, looks, failed, level", [
    ([(0.00, 0.049)], 0.1, 1, False, 0.975),                  # clears the bound by the margin: look 1 decides
    ([(0.20, 0.25)], 0.05, 1, True, 0.975),
    ([(0.00, 0.049), (0.009, 0.038)], 0.005, 2, True, 0.95),  # small, but straddles the bound: the whole sample decides
    ([(0.00, 0.049), (0.001, 0.038)], 0.045, 2, False, 0.95),  # upper end within the margin of the bound: reads on
])
def test_the_gate_stops_early_only_when_the_interval_clears_the_bound_by_the_margin(monkeypatch, intervals, bound, looks, failed, level):
    audit, calls = _fake_audit(intervals)
    monkeypatch.setattr("attncoda.studies.audit.audit", audit)
    monkeypatch.setattr(audit_stages, "stage_margin", lambda windows: 0.015 if windows < 64 else 0.0)
    report = audit_stages.staged(lambda windows: (windows, None), [16, 64], {}, bound=bound)
    assert len(calls) == looks and report.ci["failed"] == failed
    assert report.ci["look"] == looks and report.ci["level"] == level and f"look {looks} of 2" in report.ci["decided"]
    assert (report.reversal.estimate == "the early look's estimate on 16 of 64 windows per seed") == (looks == 1)


def test_the_last_look_judges_the_bound_at_95_percent_from_the_seed_rates():
    from attncoda.studies.audit import t_interval

    rates = [0.02, 0.03, 0.025]
    gate = audit_stages.final_gate(ReversalReading(0.025, t_interval(rates, 0.975), "", rates, 100, 0.975), 0.01, 2, 2)
    low = t_interval(rates, 0.95)[0]
    assert gate["level"] == 0.95 and gate["rule"] == f"the interval's lower bound {low:.4f} > 0.01" and gate["failed"]


def test_a_negative_margin_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(audit_stages, "data_file", lambda name: tmp_path / name)
    for bad in (-0.5, "0.01", None, True):
        (tmp_path / audit_stages.BIAS_FILE).write_text(json.dumps({"margin": {"16": bad}}))
        with pytest.raises(ValueError, match="not a non-negative number"):
            audit_stages.stage_margin(16)


def test_the_simulated_gates_disagree_at_most_5_percent():
    """The committed simulation of --fail-above, staged against --full, on every synthetic model and bound; and it is
    the simulation this code runs (a few audits, rerun here)."""
    data = json.loads(audit_stages.data_file(audit_stages.GATE_FILE).read_text())
    assert len(data["cells"]) == len(audit_stages.GATE_SIMULATED) * len(audit_stages.GATE_OFFSETS)
    assert data["largest_disagreement"] == max(c["disagreement"] for c in data["cells"]) <= 1 - audit_stages.CONFIDENCE
    assert any(c["decided_at_look_1"] > 0.25 for c in data["cells"]), "the early look decided the gate often somewhere"
    small = audit_stages.simulate_gate([(0.1, 0.1)], offsets=(0.0,), audits=3)
    assert small["cells"][0]["audits"] == 3 and 0 <= small["cells"][0]["disagreement"] <= 1
