"""The two-CPU comparison: numbers, readings in words and scorecard verdicts, chapter by chapter."""

import copy
import json
from pathlib import Path

from attncoda.face import cross_machine, reproducibility
from attncoda.face.results import paper_reference, read_record

ROOT = Path(__file__).parents[2]


def test_a_record_compared_with_itself_moves_nothing():
    record = read_record(ROOT / "data" / "results")
    same = cross_machine.compare_records(record, copy.deepcopy(record), paper_reference())
    assert all(c["numbers"]["differing"] == 0 and not c["readings"]["moved"] for c in same["chapters"].values())
    assert all(v["before"] == v["after"] for v in same["verdicts"].values())


def test_a_moved_reading_and_a_moved_number_are_found_and_a_diagnostic_is_not_the_largest():
    before = {"x": {"m": {"cells": [{"reading": "better", "ratio": 0.5}], "lemma1_max_relative_residual": 1e-15}}}
    after = {"x": {"m": {"cells": [{"reading": "indistinguishable", "ratio": 0.6}], "lemma1_max_relative_residual": 9e-15}}}
    chapter = cross_machine.compare_records(before, after, paper_reference())["chapters"]["x"]
    assert chapter["numbers"]["differing"] == 2 and chapter["numbers"]["where"] == "m/cells[0]/ratio"
    assert chapter["readings"]["moved"] == [{"where": "m/cells[0]/reading", "before": "better", "after": "indistinguishable"}]


def test_the_committed_comparison_is_what_the_page_states():
    path = ROOT / "data" / "verify" / "cross_cpu.json"
    rec = json.loads(path.read_text())
    from attncoda.studies import claims as scorecard

    assert set(rec["verdicts"]) == set(scorecard.RULES), "the rules changed: python -m attncoda.face.cross_machine BEFORE AFTER NOTE --record"
    rows = reproducibility.cross_cpu_rows(path)
    assert {r["chapter"] for r in rows} == set(rec["chapters"]) and "collapse" in rec["chapters"]
    sentence = reproducibility.cross_cpu_sentence(path)
    moved = [k for k, v in rec["verdicts"].items() if v["before"] != v["after"]]
    assert (f"{len(moved)} of {len(rec['verdicts'])} scorecard verdicts moved" in sentence) if moved else "are the same on both" in sentence
    for chapter, c in rec["chapters"].items():
        if c["numbers"]["differing"]:
            assert chapter in sentence.split("Numbers moved in")[1].split(".")[0], f"{chapter}'s numbers moved and the sentence must name it"


def test_the_page_s_table_sets_each_place_in_a_results_file_as_code():
    """A place such as ``synthetic/table4/d_A/sink/worst`` is a path of keys, not notation: the page shows it as code."""
    path = ROOT / "data" / "verify" / "cross_cpu.json"
    table = reproducibility.cross_cpu_markdown(path).splitlines()
    rows = reproducibility.cross_cpu_rows(path)
    assert len(table) == len(rows) + 2 and table[0].startswith("| chapter |")
    for line, row in zip(table[2:], rows):
        assert line.startswith(f"| {row['chapter']} |") and (row["where"] == "—" or f"`{row['where']}`" in line)
    assert reproducibility.cross_cpu_markdown(path.with_name("absent.json")) == "No two-CPU comparison is committed."


def test_a_relative_change_has_a_floor_so_numbers_near_zero_do_not_lead():
    before = {"x": {"m": {"p": 1e-5, "perplexity": 100.0}}}
    after = {"x": {"m": {"p": 2e-5, "perplexity": 104.0}}}
    numbers = cross_machine.compare_records(before, after, paper_reference())["chapters"]["x"]["numbers"]
    assert numbers["where"] == "m/perplexity" and numbers["largest_relative"] == round(4 / 104, 12)
