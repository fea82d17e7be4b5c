"""The scorecard's wording: every row worded from the rules' numbers, the paper's column read from the reference file,
one number per claim on the card, the chapter's opening and its body, and every chapter's opening short (at most three
sentences of at most 40 words, the verdict word first)."""

import json
import re
from pathlib import Path

from sentences import sentences, words

from attncoda.face import claims_text as text
from attncoda.face.report import dollar_math, escape
from attncoda.face.results import read_record
from attncoda.studies import claims as sc

ROOT = Path(__file__).parents[2]
PAPER = json.loads((ROOT / "data" / "paper" / "reference.json").read_text())
RECORD = read_record(ROOT / "data" / "results")


def test_every_claim_has_a_format_and_every_online_command_a_claim():
    assert set(text.FORMATS) == {c.key for c in sc.CLAIMS}
    assert set(text.ONLINE) <= set(sc.ROWS)


def test_the_paper_column_is_read_from_the_reference_file():
    verdicts = {v.claim: v for v in sc.judge(RECORD, PAPER)}
    assert f"{PAPER['figure6']['cosine_reversal_pct']} %" in text.paper_text(verdicts["figure6"], PAPER)
    lo, hi = PAPER["table2"]["reversal_range_pct"]
    assert f"stated {lo:.1f} % to {hi:.1f} %" in text.paper_text(verdicts["reversal_range"], PAPER)
    t8 = [row["temp_flip_max"] for row in PAPER["table8"]["models"].values()]
    assert text.paper_text(verdicts["temperature"], PAPER).startswith(f"{100 * min(t8):.1f} % to {100 * max(t8):.1f} %")
    changed = json.loads(json.dumps(PAPER))
    changed["figure6"]["cosine_reversal_pct"] = 12.3
    assert "12.3 %" in text.paper_text(verdicts["figure6"], changed), "the column follows the reference file, not a typed copy"


def test_every_row_is_worded_on_the_record_and_when_its_chapter_is_missing():
    for verdicts in (sc.judge(RECORD, PAPER), sc.judge({}, PAPER)):
        for row in text.rows(verdicts):
            assert all(isinstance(v, str) and v for v in row.values()), row
            assert row["verdict"].split(";")[0] in sc.VERDICTS
            assert row["claim"].startswith("“") and re.search(r"\((Abstract|Table \d+ caption|Figure \d+ caption)\)$", row["claim"])


def test_a_not_testable_row_names_its_reason_and_its_online_command():
    for v in sc.judge(RECORD, PAPER):
        if v.verdict == sc.NOT_TESTABLE:
            assert v.why in text.ours_text(v)
            if v.claim in text.ONLINE:
                assert text.ONLINE[v.claim] in text.verdict_text(v)


def test_each_chapter_opens_with_at_most_three_short_sentences_verdict_first():
    for chapter in sc.CHAPTER_CLAIMS:
        results = RECORD["measurement"] if chapter.startswith("measurement") else RECORD[chapter]
        opening = text.opening(sc.chapter_verdicts(chapter, results, PAPER))
        said = [s for block in opening.split("\n\n") for s in sentences(block)]
        assert 1 <= len(said) <= 3, (chapter, said)
        assert all(words(s) <= 40 for s in said), (chapter, [words(s) for s in said])
        assert all(re.match(r"\*\*(" + "|".join(v.capitalize() for v in sc.VERDICTS) + r"):\*\*", s) for s in said), said


def test_one_number_per_claim_on_the_card_and_the_chapters_opening():
    card = {v.claim: v for v in sc.judge(RECORD, PAPER)}
    for chapter, keys in sc.CHAPTER_CLAIMS.items():
        results = RECORD["measurement"] if chapter.startswith("measurement") else RECORD[chapter]
        for v in sc.chapter_verdicts(chapter, results, PAPER):
            number = text.claim_number(card[v.claim])
            assert number == text.claim_number(v), (chapter, v.claim)
            assert dollar_math(escape(number)) in text.opening([v]) and number in text.ours_text(card[v.claim])


def test_the_counts_count_claims_about_models_and_name_the_reversed_ones():
    verdicts = sc.judge(RECORD, PAPER)
    first = text.counts_markdown(verdicts)
    models = sum(sc.ROWS[v.claim].group == sc.MODELS for v in verdicts)
    assert first.startswith(f"**Of {models} claims about models:")
    if any(v.verdict == sc.REVERSED for v in verdicts):
        assert "Reversed here:" in first
    assert all(words(s) <= 40 for s in sentences(first))
    listed = text.reversed_markdown(verdicts)
    assert listed.count("\n") + 1 == sum(v.verdict in (sc.REVERSED, sc.DIFFERS) for v in verdicts)


def test_the_card_is_one_list_table_per_group_verdict_first():
    card = text.table_markdown(sc.judge(RECORD, PAPER))
    assert card.count("```{list-table}") == 2 and card.count(":class: scorecard") == 2
    assert card.index("Claims about models") < card.index("Checks of the mathematics")
    assert "* - verdict\n  - claim" in card


def test_a_chapters_body_gets_the_claims_number_from_the_same_function():
    card = {v.claim: v for v in sc.judge(RECORD, PAPER)}
    for chapter in sc.CHAPTER_CLAIMS:
        results = RECORD["measurement"] if chapter.startswith("measurement") else RECORD[chapter]
        for key, number in text.claim_numbers(chapter, results).items():
            assert number == text.claim_number(card[key]), (chapter, key)


def test_the_narrow_screen_labels_follow_the_cards_columns():
    css = (ROOT / "book" / "_static" / "attncoda.css").read_text()
    labels = dict(re.findall(r'table\.scorecard td:nth-child\((\d)\)::before \{ content: "([^"]+?):? "', css))
    assert labels, "the scorecard's narrow-screen labels are in attncoda.css"
    for position, label in labels.items():
        assert text.COLUMNS[int(position) - 1] == label.lower().rstrip(":"), (position, label)


def test_every_check_has_its_words():
    assert set(text.CHECK_WORDS) == {c.key for c in sc.CHECKS}
def test_the_measurement_body_prints_the_reversal_claims_number():
    body = "".join("".join(c["source"]) for c in json.loads((ROOT / "notebooks" / "03_measurement.ipynb").read_text())["cells"])
    assert body.count("{glue:text}`reversal_claim`") == 2 and 'claim_numbers("measurement", written)["reversal_range"]' in body
