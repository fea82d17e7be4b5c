"""The book's methods page: every citation of it in the code resolves to one of its headings, and every protocol value
on it is filled in from the package's constants."""

import re
from pathlib import Path

import pytest

from attncoda.base.errors import ChapterError
from attncoda.face.book import CONSTANT, constant_text, fill_constants

ROOT = Path(__file__).parents[2]
METHODS = ROOT / "book" / "methods.md"
CITATION = re.compile(r"methods-[a-z][a-z-]*[a-z]")


def labels() -> dict[str, str]:
    """The page's anchors (MyST labels ``(methods-…)=``), each with the heading that follows it."""
    lines = METHODS.read_text().splitlines()
    found = {}
    for i, line in enumerate(lines):
        label = re.fullmatch(r"\((methods-[a-z-]+)\)=", line.strip())
        if label:
            assert i + 1 < len(lines) and lines[i + 1].startswith("## "), f"{label.group(1)} is not followed by a heading"
            found[label.group(1)] = lines[i + 1][3:]
    return found


def citations() -> list[tuple[str, str]]:
    """Every ``methods-…`` anchor the package, the tests and the notebooks cite, with the file citing it."""
    files = [*(ROOT / "src").rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "notebooks").glob("*.ipynb")]
    return [(str(f.relative_to(ROOT)), m) for f in files if f.name != "test_methods.py" for m in CITATION.findall(f.read_text())]


def test_every_citation_names_a_heading_of_the_methods_page():
    anchors = labels()
    cited = citations()
    dangling = [(f, c) for f, c in cited if c not in anchors]
    assert not dangling, f"citations of headings the methods page does not have: {dangling}"
    assert len({c for _, c in cited}) >= 10 and len(cited) >= 25, "the code cites the methods page section by section"


OUTSIDE_SPEC = "MATH" + ".md"
"""The name of a specification file kept outside the repository (spelt in two parts, so this test does not cite it)."""


def test_no_citation_of_a_spec_outside_the_repository():
    for folder in ("src", "tests", "notebooks", "book", "data"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".ipynb", ".md", ".json") and path.stat().st_size < 5_000_000:
                assert OUTSIDE_SPEC not in path.read_text(), f"{path.relative_to(ROOT)} cites {OUTSIDE_SPEC}, which the repository does not hold"


def test_every_protocol_value_on_the_page_comes_from_a_constant():
    text = METHODS.read_text()
    markers = CONSTANT.findall(text)
    assert len(markers) >= 15
    filled = fill_constants(text)
    assert "⟨" not in filled and "⟩" not in filled
    assert "$\\varepsilon$ = 1e-06" in filled and "(0, 1, 2)" in filled and "50,000 triples" in filled


def test_an_unknown_constant_is_one_clear_error():
    with pytest.raises(ChapterError, match="names a constant 'NO_SUCH' that the package does not have"):
        constant_text("NO_SUCH")
    with pytest.raises(ChapterError, match="'studies.nowhere.X'"):
        constant_text("studies.nowhere.X")
    assert constant_text("studies.calibration.CalibrationGrid.sink_masses", "range") == "0.02 to 0.98"
