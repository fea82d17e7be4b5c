"""Each chapter default has one home, and every copy of it is tied to that home here.

A notebook's ``parameters`` cell must hold literal values (papermill overwrites that cell), so a default that the
package also needs is a named constant (``base/protocol.py``, or the study module that owns it) and the cell repeats
it; :data:`HOMES` lists each such copy. A value that appears nowhere else (say, clustering's ``samples``) lives only in
its cell. The measurement chapter's sections take their cell from the measurement chapter's, and the chapter table's
small profile may only set parameters the notebook has.
"""

import ast
import inspect
from pathlib import Path

import pytest

from attncoda.base import protocol
from attncoda.face.chapters import CHAPTERS
from attncoda.face.parameters import notebook_parameters
from attncoda.engine import head_distances
from attncoda.studies import collapse, pruning_sweep

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "src" / "attncoda"

HOMES = {
    # (chapter, parameter): its home, the constant the package itself uses
    **{(c, "seeds"): list(protocol.SEEDS) for c in ("measurement", "measurement-layers", "measurement-audits", "measurement-witness", "pruning")},
    **{(c, "n"): protocol.N_WINDOWS for c in ("measurement", "measurement-layers", "measurement-audits", "measurement-witness", "collapse")},
    **{(c, "length"): protocol.WINDOW_LENGTH for c in ("measurement", "measurement-layers", "measurement-audits", "measurement-witness",
                                                       "collapse", "clustering", "pruning")},
    **{(c, "n_triples"): protocol.N_TRIPLES for c in ("measurement", "measurement-layers", "measurement-audits", "measurement-witness",
                                                      "collapse")},
    **{(c, "batch_size"): protocol.BATCH_SIZE for c in ("measurement", "measurement-layers", "measurement-audits", "measurement-witness",
                                                        "collapse")},
    ("clustering", "signature_n"): protocol.N_WINDOWS,
    ("pruning", "signature_n"): protocol.N_WINDOWS,
    ("pruning", "tie_draws"): pruning_sweep.TIE_DRAWS,
    ("pruning", "random_sets"): pruning_sweep.RANDOM_SETS,
    ("pruning", "n_windows"): pruning_sweep.PRUNE_WINDOWS,
    ("pruning", "calibration_windows"): pruning_sweep.CALIBRATION_WINDOWS,
    ("collapse", "seed"): collapse.ENDPOINT_WINDOW_SEEDS[0],
    ("clustering", "batch_size"): inspect.signature(head_distances.head_distances).parameters["batch_size"].default,
}


def cell(chapter: str) -> dict:
    return notebook_parameters(ROOT / "notebooks" / f"{CHAPTERS[chapter].notebook}.ipynb")


@pytest.mark.parametrize("chapter, name", list(HOMES), ids=lambda v: str(v))
def test_a_notebook_default_is_its_home_s_value(chapter, name):
    assert cell(chapter)[name] == HOMES[chapter, name], (
        f"notebook {CHAPTERS[chapter].notebook}: {name} = {cell(chapter)[name]!r}, but its home says {HOMES[chapter, name]!r}")


def test_every_copy_in_a_cell_is_listed():
    """A cell value equal to a home's constant under a name HOMES knows is listed, so a new chapter cannot copy one silently."""
    names = {name for _, name in HOMES} - {"seed"}  # a first seed of 0 is every chapter's own start, not a copy
    for key, chapter in CHAPTERS.items():
        if not chapter.writes_results:
            continue
        for name, value in cell(key).items():
            homes = {v for (c, n), v in HOMES.items() if n == name and not isinstance(v, list)}
            if name in names and isinstance(value, int) and value in homes:
                assert (key, name) in HOMES, f"{chapter.notebook}: {name} = {value} copies a home; add it to HOMES"


@pytest.mark.parametrize("section", [c for c in CHAPTERS.values() if c.parent == "measurement"], ids=lambda c: c.key)
def test_a_measurement_section_takes_the_measurement_chapter_s_cell(section):
    assert cell(section.key) == cell("measurement")
    assert section.small == CHAPTERS["measurement"].small


@pytest.mark.parametrize("chapter", list(CHAPTERS.values()), ids=lambda c: c.key)
def test_the_small_profile_sets_only_the_notebook_s_parameters(chapter):
    assert set(chapter.small) <= set(cell(chapter.key)), set(chapter.small) - set(cell(chapter.key))


STUDY_DEFAULTS = {"tie_draws": pruning_sweep.TIE_DRAWS, "random_sets": pruning_sweep.RANDOM_SETS, "n_windows": pruning_sweep.PRUNE_WINDOWS,
                  "calibration_windows": pruning_sweep.CALIBRATION_WINDOWS, "n_triples": protocol.N_TRIPLES,
                  "batch_size": protocol.BATCH_SIZE}


def test_no_function_of_the_package_types_another_default():
    """A keyword of these names in any function of the package defaults to its home (or to no number at all). The head
    distances hold all layers of a batch at once, so their batch is their own setting (tied to clustering's cell above)."""
    typed = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own_batch = path.name == "head_distances.py"
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            args = node.args.args[len(node.args.args) - len(node.args.defaults):] + node.args.kwonlyargs
            defaults = node.args.defaults + node.args.kw_defaults
            for arg, default in zip(args, defaults):
                if own_batch and arg.arg == "batch_size":
                    continue
                if arg.arg in STUDY_DEFAULTS and isinstance(default, ast.Constant) and isinstance(default.value, int):
                    if default.value != STUDY_DEFAULTS[arg.arg]:
                        typed.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}({arg.arg}={default.value})")
    assert not typed, typed


def test_the_pruning_defaults_have_one_home_each():
    """The pruning sweep's own defaults are the constants, not numbers typed again (its signature names them)."""
    source = inspect.getsource(pruning_sweep)
    for name in ("TIE_DRAWS", "RANDOM_SETS", "PRUNE_WINDOWS", "CALIBRATION_WINDOWS"):
        assert source.count(f"{name} = ") == 1, name
