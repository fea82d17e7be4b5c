"""CITATION.cff: valid Citation File Format 1.2.0, citing the paper (preferred) and this companion at the package's
version. The schema is the format's own (github.com/citation-file-format, CC-BY-4.0), kept beside this test;
``cffconvert --validate`` accepts the file too, but needs a jsonschema older than the one the lock pins."""

import json
import tomllib
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).parents[2]
SCHEMA = Path(__file__).parent / "data" / "citation-file-format-1.2.0.schema.json"


def citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text())


def test_the_citation_file_is_valid_citation_file_format():
    schema = json.loads(SCHEMA.read_text())
    data = json.loads(json.dumps(citation(), default=str))  # dates as the strings the schema expects
    jsonschema.validate(data, schema, format_checker=jsonschema.FormatChecker())


def test_an_invalid_citation_is_refused():
    schema = json.loads(SCHEMA.read_text())
    broken = {k: v for k, v in citation().items() if k != "authors"}
    try:
        jsonschema.validate(json.loads(json.dumps(broken, default=str)), schema)
    except jsonschema.ValidationError as error:
        assert "authors" in str(error)
    else:
        raise AssertionError("a citation without authors passed the schema")


def test_it_cites_the_paper_first_and_this_companion_at_its_version():
    cff = citation()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert cff["version"] == version
    paper = cff["preferred-citation"]
    assert paper["title"].startswith("Which Question Is Your Attention Metric Answering?")
    assert [a["family-names"] for a in paper["authors"]] == ["Papamichalis", "Ruane"]
    from attncoda.face.colab import repository_url

    assert cff["repository-code"].rstrip("/") == repository_url(), "the citation names the one repository address"
