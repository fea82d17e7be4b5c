"""The package's layers and the tests' layout follow one order: base → math → engine → studies → face. No module
imports a layer above its own, and the math tests run without torch (the engine alone imports it)."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "src" / "attncoda"
ORDER = ("base", "math", "engine", "studies", "face")


def imported_layers(path: Path) -> set[str]:
    """The package layers a module imports (absolute ``attncoda.x`` or relative ``..x`` imports), top-level or not."""
    own = path.relative_to(PACKAGE).parts[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").startswith("attncoda."):
                found.add(node.module.split(".")[1])
            elif node.level == 1:
                found.add(own)
            elif node.level == 2 and node.module:
                found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("attncoda."))
    return found & set(ORDER)


def test_no_module_imports_a_layer_above_its_own():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = path.relative_to(PACKAGE).parts[0]
        if layer not in ORDER:
            continue
        upward += [f"{path.relative_to(ROOT)} ({layer}) imports {above}" for above in imported_layers(path)
                   if ORDER.index(above) > ORDER.index(layer)]
    assert not upward, "\n".join(upward)


def test_the_tests_are_laid_out_by_layer():
    folders = {p.parent.name for p in (ROOT / "tests").rglob("test_*.py")}
    assert folders == {"math", "engine", "studies", "face", "book"}, folders
    assert not list((ROOT / "tests").glob("test_*.py")), "a test belongs in its layer's folder"


NO_TORCH = """
import sys

class NoTorch:  # torch cannot be imported at all, as on a machine without it
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch'", name=name)

sys.meta_path.insert(0, NoTorch())
import pytest
sys.exit(pytest.main([sys.argv[1], "-q", "-p", "no:cacheprovider"]))
"""


def test_the_math_tests_run_without_torch():
    """`pytest tests/math` passes on a machine where torch cannot be imported (the math layer and its tests need none)."""
    done = subprocess.run([sys.executable, "-c", NO_TORCH, str(ROOT / "tests" / "math")], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout


def test_one_batch_size_named_once():
    """BATCH_SIZE lives in base/protocol.py: no module types its value as a batch size (a small profile's smaller batch
    and the head distances' own are other settings), and every notebook's batch_size parameter starts at it."""
    import re

    import nbformat

    from attncoda.base.protocol import BATCH_SIZE

    typed = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in PACKAGE.rglob("*.py")
             for m in re.finditer(rf"batch_size(: int)? *= *{BATCH_SIZE}\b|\"batch_size\": *{BATCH_SIZE}\b", p.read_text())]
    assert not typed, typed
    for path in (ROOT / "notebooks").glob("*.ipynb"):
        if path.stem == "05_clustering":
            continue  # its batch_size is the head distances' streaming batch (every layer held at once), another setting
        cell = next(c for c in nbformat.read(path, as_version=4).cells if "parameters" in c.metadata.get("tags", []))
        found = re.search(r"^batch_size = (\d+)", cell.source, re.M)
        assert found is None or int(found.group(1)) == BATCH_SIZE, f"{path.name}: batch_size = {found.group(1)}"


def test_metric_groups_are_named_only_in_metrics_py():
    """Every named group of metrics lives in math/metrics.py (CLASSICAL, CALIBRATED, CURVES, REVERSAL, TAXONOMY,
    CLUSTERED, BHATTACHARYYA, STAKES): no other module defines a constant that lists metric names, and each of the
    groups that used to be restated (a Table 2 list in three chapters, the pair that ties, the pair Table 8 compares)
    is written once."""
    import re

    names = "cosine|js|euclidean|hellinger|fisher_rao|aitchison|content"
    constant = re.compile(rf"^[A-Z_0-9]+\s*(:[^=]+)?=\s*\(\s*\"({names})\"\s*,\s*\"({names})\"", re.M)
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in PACKAGE.rglob("*.py") if p.name != "metrics.py"
             for m in constant.finditer(p.read_text())]
    assert not found, found
    for group in ('("hellinger", "fisher_rao")', '("js", "content")', '("cosine", "js", "euclidean")'):
        elsewhere = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py") if p.name != "metrics.py" and group in p.read_text()]
        assert not elsewhere, f"{group} restated in {elsewhere}"
