"""`attncoda audit --format json` is a contract: every report follows the versioned schema, and the schema follows the
report's fields."""

import dataclasses
import json

import jsonschema
import pytest

from attncoda.face.cli import main
from attncoda.studies.audit import ADVICE, AuditReport
from attncoda.studies.audit_schema import SCHEMA, SCHEMA_ID, SCHEMA_VERSION

PINNED = "ed69cdc115278101"
"""The sha256 (first 16 hex digits) of the schema of SCHEMA_VERSION 1."""


@pytest.fixture(scope="module")
def tiny_env(tmp_path_factory):
    from tiny_models import save_tiny

    root = tmp_path_factory.mktemp("audit-schema")
    return {"llama": save_tiny("llama", root / "tiny-llama"), "cache": root / "cache"}


def test_the_schema_is_valid_and_holds_every_field_of_the_report():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    fields = {f.name for f in dataclasses.fields(AuditReport)}
    assert set(SCHEMA["properties"]) == fields | {"schema"}, "a field added to or taken from the report changes the schema (and its version)"
    assert set(SCHEMA["properties"]["advice"]["enum"]) == set(ADVICE)
    assert SCHEMA["$id"].endswith(f":{SCHEMA_VERSION}")


def test_a_changed_schema_changes_its_version():
    """The schema's content is pinned to its version: editing one without the other fails here."""
    import hashlib

    digest = hashlib.sha256(json.dumps(SCHEMA, sort_keys=True).encode()).hexdigest()[:16]
    assert (SCHEMA_VERSION, digest) == (1, PINNED), f"the schema changed (now {digest}): raise SCHEMA_VERSION and pin the new digest"


@pytest.mark.parametrize("extra", [[], ["--full"], ["--fail-above", "0.5"], ["--metric", "cosine", "--sink", "0,1"]],
                         ids=["staged", "full", "gate", "cosine-two-keys"])
def test_every_report_follows_the_schema(extra, tiny_env, monkeypatch, capsys):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tiny_env["cache"]))
    code = main(["audit", "--model", str(tiny_env["llama"]), "--seeds", "0", "1", "--n", "4", "--length", "16", "--triples", "500", "--format", "json", *extra])
    report = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and report["schema"] == SCHEMA_ID
    jsonschema.validate(report, SCHEMA)
    assert AuditReport.from_json(report).to_json() == {k: v for k, v in report.items() if k != "schema"}


def test_a_report_that_drifts_from_the_schema_is_refused(tiny_env, monkeypatch, capsys):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tiny_env["cache"]))
    main(["audit", "--model", str(tiny_env["llama"]), "--seeds", "0", "--n", "4", "--length", "16", "--triples", "500", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    for broken in ({**report, "rate": 0.1}, {**report, "reversal": {**report["reversal"], "rate": "high"}}, {k: v for k, v in report.items() if k != "advice"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, SCHEMA)
