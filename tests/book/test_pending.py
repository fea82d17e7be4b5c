"""The patches in pending/ wait for a record rebuild (pending/README.md): they must still apply to the tree as it is, one
after another in the README's order (a later patch may build on an earlier one), and the README must list each one, so
that the session that rebuilds the record can land them."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PATCHES = sorted((ROOT / "pending").glob("*.patch"))


def _order() -> list[str]:
    return re.findall(r"^\| `([\w.-]+\.patch)`", (ROOT / "pending" / "README.md").read_text(), re.M)


def test_the_first_pending_patch_still_applies_to_the_tree():
    order = _order()
    if not order:
        pytest.skip("no patch waits")
    done = subprocess.run(["git", "apply", "--check", str(ROOT / "pending" / order[0])], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, f"{order[0]} no longer applies: rebase it onto main ({done.stderr.strip()})"


def test_the_readme_lists_every_pending_patch():
    listed = set(re.findall(r"`([\w.-]+\.patch)`", (ROOT / "pending" / "README.md").read_text()))
    assert listed == {p.name for p in PATCHES}


def test_the_pending_patches_apply_one_after_another_in_the_readmes_order(tmp_path):
    """Applied in a scratch index (the work tree untouched), in the order pending/README.md lists them."""
    import os

    order = _order()
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "index")}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=ROOT, env=env, check=True)
    for name in order:
        done = subprocess.run(["git", "apply", "--cached", str(ROOT / "pending" / name)], cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{name} does not apply after the ones before it: {done.stderr.strip()}"


CACHES = sorted((ROOT / "pending").glob("*.jsonl"))
ENTRY = re.compile(r"^perplexity/[\w.@-]+/[0-9a-f]{24}\.json$")


def test_the_readme_lists_every_pending_cache():
    listed = set(re.findall(r"`([\w.-]+\.jsonl)`", (ROOT / "pending" / "README.md").read_text()))
    assert listed == {p.name for p in CACHES}


@pytest.mark.parametrize("cache", CACHES, ids=lambda p: p.name)
def test_a_pending_cache_holds_its_manifest_and_perplexity_entries_only(cache):
    """What pending/land.sh writes into $ATTNCODA_CACHE: a manifest line naming the CPU that computed the entries, then
    perplexity evaluations in the cache's own layout and form (engine.perplexity), nothing outside that folder."""
    import json

    lines = cache.read_text().splitlines()
    manifest = json.loads(lines[0])["manifest"]
    assert {"cpu", "native_bf16", "commit", "libraries", "entries"} <= set(manifest) and manifest["entries"] == len(lines) - 1
    paths = []
    for line in lines[1:]:
        item = json.loads(line)
        assert ENTRY.match(item["path"]), f"{item['path']} is not a perplexity cache entry"
        entry = item["entry"]
        assert {"perplexity", "nll", "tokens", "window_nll", "window_tokens", "dtype"} <= set(entry), item["path"]
        assert sum(entry["window_tokens"]) == entry["tokens"], item["path"]
        paths.append(item["path"])
    assert len(set(paths)) == len(paths), "each entry once"
