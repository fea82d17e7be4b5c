"""attncoda audit: a one-page convention report from signatures, on a model it has never seen."""

import json
import subprocess
import sys

import pytest

from attncoda.studies.audit import wilson


@pytest.fixture(scope="module")
def tiny_env(tmp_path_factory):
    from tiny_models import save_tiny, save_tiny_gguf

    root = tmp_path_factory.mktemp("audit")
    return {"llama": save_tiny("llama", root / "tiny-llama"), "bert": save_tiny("bert", root / "tiny-bert"),
            "gguf": save_tiny_gguf(root / "tiny.gguf"), "cache": root / "cache"}


def _audit(tiny_env, *argv):
    import os

    env = {**os.environ, "ATTNCODA_CACHE": str(tiny_env["cache"])}
    return subprocess.run([sys.executable, "-m", "attncoda.face.cli", "audit", *argv, "--n", "4", "--length", "24", "--triples", "500"],
                          capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.slow
def test_audit_reports_every_part_in_every_format(tiny_env):
    done = _audit(tiny_env, "--model", str(tiny_env["llama"]), "--format", "json", "--seeds", "0", "1")
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    assert r["sink"]["keys"] == [0] and r["seeds"] == [0, 1] and len(r["top_keys"]) == 5
    lo, hi = r["reversal"]["interval"]
    assert 0 <= r["reversal"]["rate"] <= 1 and lo <= r["reversal"]["rate"] <= hi
    assert r["prediction"]["version"] == 2 and "recommendation" in r
    text = _audit(tiny_env, "--model", str(tiny_env["llama"]), "--seeds", "0", "1").stdout
    assert "recommendation:" in text and "reversal (Jensen–Shannon)" in text
    md = _audit(tiny_env, "--model", str(tiny_env["llama"]), "--seeds", "0", "1", "--format", "markdown", "--sink", "0,1,2,3").stdout
    assert md.startswith("## Convention audit") and "keys 0,1,2,3" in md


@pytest.mark.slow
def test_audit_on_an_encoder_and_a_gguf_file(tiny_env):
    enc = json.loads(_audit(tiny_env, "--model", str(tiny_env["bert"]), "--seeds", "0", "--format", "json", "--metric", "cosine").stdout)
    assert enc["sink"]["name"] == "cls_sep" and enc["prediction"]["abstain"] and not enc["causal"]
    gguf = _audit(tiny_env, "--model", str(tiny_env["gguf"]), "--seeds", "0")
    assert gguf.returncode == 0 and "qwen2" in gguf.stdout


@pytest.mark.slow
@pytest.mark.parametrize("argv, message", [
    (["--sink", "bos"], "prepends no BOS token"),
    (["--sink", "0,99"], "must lie in 0..23"),
    (["--metric", "jsd"], "unknown metric 'jsd'"),
])
def test_audit_bad_input_is_one_line(tiny_env, argv, message):
    done = _audit(tiny_env, "--model", str(tiny_env["llama"]), "--seeds", "0", *argv)
    assert done.returncode == 1 and message in done.stderr and done.stderr.strip().count("\n") == 0


def test_wilson_interval():
    lo, hi = wilson(0, 10)
    assert lo == 0 and 0 < hi < 0.35


@pytest.mark.slow  # over 3 s: make test runs it, make check leaves it (held under 120 s in CI)
def test_the_report_is_a_typed_result_that_round_trips_through_its_json(tiny_env):
    from attncoda.studies.audit import AuditReport, recommend, render
    from attncoda.studies.audit_schema import SCHEMA_ID

    data = json.loads(_audit(tiny_env, "--model", str(tiny_env["llama"]), "--format", "json", "--seeds", "0", "1").stdout)
    report = AuditReport.from_json(data)
    assert {"schema": SCHEMA_ID, **report.to_json()} == data and report.reversal.interval[0] <= report.reversal.rate <= report.reversal.interval[1]
    assert recommend(report) == data["recommendation"] and report.model in render(report, "markdown")


def test_advice_follows_the_interval_and_never_says_the_conventions_agree():
    from dataclasses import replace

    from attncoda.studies.audit import AuditReport, ReversalReading, advice_rule, recommend

    base = AuditReport("m", "llama", True, 8, 24, 4, [0, 1], "logit", "js", "JS", {"name": "first", "keys": [0]}, True,
                       [{"key": 0, "mean_attention": 0.6}], 0.5, 0.5, ReversalReading(0.1, (0.09, 0.11), "", [0.1], 100), None, 0.2,
                       {"bit_identical": True, "exact_zeros": 0})
    for interval, rule in (((0.09, 0.11), "matters"), ((0.0, 0.02), "small"), ((0.05, 0.1), "undecided"), ((float("nan"),) * 2, "undefined")):
        rate = float("nan") if rule == "undefined" else sum(interval) / 2
        report = replace(base, reversal=ReversalReading(rate, interval, "", [rate], 100))
        report = replace(report, advice=advice_rule(report.reversal, report.threshold))
        text = recommend(report)
        assert report.advice == rule and "same question" not in text
        assert ("No advice" in text) == (rule == "undefined") and ("cannot tell" in text) == (rule == "undecided")


@pytest.mark.parametrize("argv, message", [
    (("--triples", "10"), "too few for an interval"),
    (("--fail-above", "5"), "between 0 and 1"),
])
def test_audit_refuses_what_cannot_give_an_interval(tiny_env, argv, message):
    import os

    done = subprocess.run([sys.executable, "-m", "attncoda.face.cli", "audit", "--model", str(tiny_env["llama"]), "--n", "4", "--length", "24", *argv],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "ATTNCODA_CACHE": str(tiny_env["cache"])})
    assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow  # over 3 s: make test runs it, make check leaves it (held under 120 s in CI)
def test_fail_above_exits_1_when_the_interval_lies_above_and_says_which_rule_fired(tiny_env):
    high = _audit(tiny_env, "--model", str(tiny_env["llama"]), "--seeds", "0", "1", "--format", "json", "--fail-above", "0")
    data = json.loads(high.stdout)
    assert data["ci"]["fail_above"] == 0 and data["ci"]["rule"].startswith("the interval's lower bound")
    assert high.returncode == (1 if data["ci"]["failed"] else 0) and data["advice"] in ("matters", "small", "undecided", "undefined")
    low = _audit(tiny_env, "--model", str(tiny_env["llama"]), "--seeds", "0", "1", "--fail-above", "0.99")
    assert low.returncode == 0 and "passed" in low.stdout
    assert 0 <= data["reversal"]["interval"][0] <= data["reversal"]["interval"][1] <= 1


@pytest.mark.slow  # over 3 s: make test runs it, make check leaves it (held under 120 s in CI)
def test_the_report_says_where_attention_goes_over_every_row_and_uses_the_chosen_sink_throughout(tiny_env):
    default = json.loads(_audit(tiny_env, "--model", str(tiny_env["llama"]), "--seeds", "0", "--format", "json").stdout)
    assert default["top_tokens"] is not None and 0 <= default["recent_mass"] <= 1 and "every row" in default["where_from"]
    assert all(0 <= k["key"] < 24 for k in default["top_keys"])
    other = json.loads(_audit(tiny_env, "--model", str(tiny_env["llama"]), "--seeds", "0", "--format", "json", "--sink", "0,1,2,3").stdout)
    assert other["sink"]["keys"] == [0, 1, 2, 3] and other["row_sink_mass"] > default["row_sink_mass"]  # four keys hold more than one


@pytest.mark.slow
def test_an_audit_loads_its_model_once(tiny_env, tmp_path, monkeypatch, capsys):
    """The signatures and the attention maps are computed from one loaded model (a cold cache needs both)."""
    from attncoda.engine import models
    from attncoda.face.cli import main

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cold"))
    loads = []
    real = models._load
    monkeypatch.setattr(models, "_load", lambda name, ref: loads.append(name) or real(name, ref))
    main(["audit", "--model", str(tiny_env["llama"]), "--n", "4", "--length", "24", "--triples", "500", "--seeds", "0", "1"])
    assert "recommendation:" in capsys.readouterr().out
    assert loads == [str(tiny_env["llama"])]


@pytest.mark.slow
@pytest.mark.parametrize("family", ["bert", "llama"])
def test_fail_above_gives_the_same_pass_or_fail_as_full(tiny_env, family, monkeypatch, capsys):
    """On the default sample (two looks), --fail-above decides as --full does at every bound of a grid around the
    model's rate, whichever look decides it; the grid reaches both sides of the rate."""
    from attncoda.face.cli import main

    monkeypatch.setenv("ATTNCODA_CACHE", str(tiny_env["cache"]))
    model = str(tiny_env[family])

    def gate(*argv):
        try:
            code = main(["audit", "--model", model, "--format", "json", *argv])
        except SystemExit as stop:  # --fail-above's status 1
            code = stop.code
        report = json.loads(capsys.readouterr().out)
        return code, report

    _, full = gate("--full", "--fail-above", "0")
    low, high = full["reversal"]["interval"]
    rate = full["reversal"]["rate"]
    bounds = sorted({round(max(0.0, b), 4) for b in (0.0, low / 2, (low + rate) / 2, rate, (rate + high) / 2, 2 * high, high + 0.1)})
    decided_early, rows = 0, []
    for bound in bounds:
        code_full, by_full = gate("--full", "--fail-above", str(bound))
        code, staged = gate("--fail-above", str(bound))
        assert (code, staged["ci"]["failed"]) == (code_full, by_full["ci"]["failed"]), (bound, staged["ci"], by_full["ci"])
        decided_early += staged["ci"]["look"] == 1
        rows.append(f"{family} bound {bound}: staged failed={staged['ci']['failed']} at look {staged['ci']['look']}, full failed={by_full['ci']['failed']}")
    with capsys.disabled():  # the grid, for the record of a run with -s
        print("", *rows, sep="\n")
    assert any(b <= low for b in bounds) and any(b > high for b in bounds)
