"""The publishing workflow calls the same make target a reader runs, and the repository address is one setting."""

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).parents[2]


def test_workflow_builds_with_make_book_and_publishes_the_html():
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    triggers = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert triggers["push"]["branches"] == ["main"]
    steps = flow["jobs"]["build"]["steps"]
    assert any(s.get("run") == "make book" for s in steps)
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "_build/html"
    assert any("attncoda" in str(s.get("with", {}).get("path", "")) for s in steps), "the model and signature caches are restored"
    assert flow["jobs"]["deploy"]["needs"] == "build"
    colab = next(s for s in steps if str(s.get("uses", "")).startswith("peaceiris/actions-gh-pages"))
    from attncoda.face.book import COLAB_BRANCH

    assert colab["with"]["publish_branch"] == COLAB_BRANCH and colab["with"]["publish_dir"] == "_build/colab" and colab["with"]["keep_files"]


def test_the_repository_address_is_the_same_everywhere():
    """One setting, ``repository.url`` in _config.yml: the Colab cell the build inserts clones it, no committed notebook
    carries an address of its own, and the README names it."""
    from attncoda.face.colab import COLAB_SOURCE, repository_url

    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"].rstrip("/")
    assert repository_url() == url and 'REPOSITORY = "{repository}"' in COLAB_SOURCE
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        sources = "".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"])
        assert not re.findall(r"github\.com/|^REPOSITORY = ", sources, flags=re.M), f"{nb.name} names a repository address of its own"
    assert url in (ROOT / "README.md").read_text()


def test_a_reader_can_report_an_error_from_the_page_it_is_on():
    html = yaml.safe_load((ROOT / "_config.yml").read_text())["html"]
    assert html["use_issues_button"] is True and html["use_repository_button"] is True
