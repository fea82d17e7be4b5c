"""The scorecard's wording: every claim worded, the paper's numbers held to the reference file, and every chapter's
opening short (at most three sentences of at most 40 words, the verdict word first)."""

import json
import re
from pathlib import Path

from sentences import sentences, words

from attncoda.face import scorecard_text as text
from attncoda.face.results import read_record
from attncoda.studies import scorecard as sc

ROOT = Path(__file__).parents[2]
PAPER = json.loads((ROOT / "data" / "paper" / "reference.json").read_text())
RECORD = read_record(ROOT / "data" / "results")


def test_every_rule_has_its_words():
    for table in (text.CLAIMS, text.CHAPTERS, text.PAPER, text.SHORT):
        assert set(table) == set(sc.RULES)


def test_the_paper_column_quotes_the_reference_file():
    t10 = PAPER["table10"]["models"]
    llama, gpt2 = t10["Llama-3.2-1B"], t10["GPT-2 (124M)"]
    assert f"{llama['rows']['0.2']['js_keep'][0]:,.0f}" in text.PAPER["blow_up"] and str(llama["base"][0]) in text.PAPER["blow_up"]
    assert f"{llama['rows']['0.2']['js_keep'][0] / llama['base'][0]:.0f}×" in text.PAPER["blow_up"]
    assert str(llama["rows"]["0.2"]["content"][0]) in text.PAPER["js_worse"]
    assert str(gpt2["rows"]["0.2"]["js_keep"][0]) in text.PAPER["js_worse"] and str(gpt2["rows"]["0.2"]["content"][0]) in text.PAPER["js_worse"]
    assert f"{PAPER['figure6']['cosine_reversal_pct']} %" in text.PAPER["figure6"]
    assert f"{PAPER['figure3']['mean_abs_deviation_points']} points mean, {PAPER['figure3']['max_deviation_points']} max" == text.PAPER["deviation"]
    shares = PAPER["figure5"]["pythia_shares"]
    assert f"{100 * min(shares.values()):.0f} % to {100 * max(shares.values()):.0f} %" in text.PAPER["collapse_share"]
    assert ", ".join(f"{100 * v:.0f}" for v in shares.values()) in text.PAPER["share_scale"]
    t5 = [v for row in PAPER["table5"]["models"].values() for v in row.values()]
    assert f"ARI {min(t5):.2f} to {max(t5):.2f}" in text.PAPER["taxonomy"]
    t8 = [row["temp_flip_max"] for row in PAPER["table8"]["models"].values()]
    assert f"JS′ {100 * min(t8):.1f} % to {100 * max(t8):.1f} %" in text.PAPER["temperature"]
    assert PAPER["predictor"]["outcomes"].startswith("one confirmation, one abstention, one failure")


def test_every_row_is_worded_on_the_record_and_when_its_chapter_is_missing():
    for verdicts in (sc.judge(RECORD, PAPER), sc.judge({}, PAPER)):
        for row in text.rows(verdicts):
            assert all(isinstance(v, str) and v for v in row.values()), row
            assert row["verdict"].split(" (")[0].split(":")[0] in sc.VERDICTS


def test_each_chapter_opens_with_at_most_three_short_sentences_verdict_first():
    for chapter in sc.CHAPTER_CLAIMS:
        results = RECORD["measurement"] if chapter.startswith("measurement") else RECORD[chapter]
        opening = text.opening(sc.chapter_verdicts(chapter, results, PAPER))
        said = [s for block in opening.split("\n\n") for s in sentences(block)]
        assert 1 <= len(said) <= 3, (chapter, said)
        assert all(words(s) <= 40 for s in said), (chapter, [words(s) for s in said])
        assert all(re.match(r"\*\*(" + "|".join(v.capitalize() for v in sc.VERDICTS) + r"):\*\*", s) for s in said), said


def test_the_counts_name_the_reversed_claims_first():
    verdicts = sc.judge(RECORD, PAPER)
    first = text.counts_markdown(verdicts)
    assert first.startswith(f"**Of {len(verdicts)} claims:") and "Reversed here:" in first
    assert all(words(s) <= 40 for s in sentences(first))
    listed = text.reversed_markdown(verdicts)
    assert listed.count("\n") + 1 == sum(v.verdict in (sc.REVERSED, sc.DIFFERS) for v in verdicts)
