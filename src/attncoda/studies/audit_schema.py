"""The contract of ``attncoda audit --format json``: a versioned JSON Schema (draft 2020-12) that a CI gate can hold a
report to. Every report names the version it follows in its ``schema`` field; a field that is added, removed or
retyped changes the version (``tests/face/test_audit_schema.py`` validates the reports of the test models with
``jsonschema`` and holds the schema to :class:`~attncoda.studies.audit.AuditReport`'s fields).

``python -m attncoda.studies.audit_schema`` prints the schema.
"""

from __future__ import annotations

SCHEMA_VERSION = 1
SCHEMA_ID = f"urn:attncoda:audit-report:{SCHEMA_VERSION}"
"""The schema's name, which every report carries (a URN: no address serves it; the module prints it)."""

_NUMBER = {"type": "number"}
_RATE = {"type": "number", "minimum": 0, "maximum": 1}
_COUNT = {"type": "integer", "minimum": 0}
_TEXT = {"type": "string"}


def _maybe(schema: dict) -> dict:
    return {"anyOf": [schema, {"type": "null"}]}


def _object(properties: dict, required=None) -> dict:
    return {"type": "object", "properties": properties, "required": sorted(required if required is not None else properties),
            "additionalProperties": False}


REVERSAL = _object({"rate": _maybe(_RATE), "interval": {"type": "array", "items": _maybe(_RATE), "minItems": 2, "maxItems": 2},
                    "interval_kind": _TEXT, "per_seed": {"type": "array", "items": _maybe(_RATE)}, "compared": _COUNT,
                    "level": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}, "estimate": _TEXT})
PREDICTION = _object({"version": {"type": "integer"}, "predicted": _maybe(_NUMBER), "abstain": {"type": "boolean"},
                      "reasons": {"type": "array", "items": _TEXT}, "deviation_points": _maybe(_NUMBER), "within_tolerance": {"type": "boolean"}})
GATE = {"type": "object", "properties": {"fail_above": _RATE, "failed": {"type": "boolean"}, "rule": _TEXT, "level": _NUMBER,
                                         "look": {"type": ["integer", "string", "null"]}, "looks": {"type": ["integer", "null"]},
                                         "margin": _NUMBER, "decided": {"type": ["boolean", "string", "null"]}},
        "required": ["fail_above", "failed", "rule"]}
STAGE = {"type": "object", "properties": {"windows": _COUNT, "level": _NUMBER, "margin": _NUMBER, "rate": _maybe(_RATE),
                                          "interval": {"type": "array", "items": _maybe(_RATE)}, "advice": _TEXT},
         "required": ["windows", "level", "rate", "interval", "advice"]}

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": SCHEMA_ID,
    "title": "attncoda audit report",
    "description": "What `attncoda audit --format json` prints for one model (or a set of saved patterns).",
    **_object({
        "schema": {"const": SCHEMA_ID},
        "model": _TEXT, "architecture": _TEXT, "causal": {"type": "boolean"}, "heads": _COUNT, "length": _COUNT,
        "windows_per_seed": _COUNT, "seeds": {"type": "array", "items": {"type": "integer"}}, "signature_kind": _TEXT,
        "metric": {"enum": ["cosine", "js", "euclidean", "hellinger", "fisher_rao", "aitchison", "content"]}, "metric_label": _TEXT,
        "sink": _object({"name": _TEXT, "keys": {"type": "array", "items": {"type": ["integer", "string"]}}}),
        "bos_prepended": {"type": "boolean"},
        "top_keys": {"type": "array", "items": {"type": "object", "required": ["key", "mean_attention"]}},
        "row_sink_mass": _maybe(_RATE), "signature_sink_mass": _maybe(_RATE),
        "reversal": REVERSAL, "prediction": _maybe(PREDICTION),
        "collapse_disagreement": _maybe(_NUMBER),
        "eps_sweep": _object({"bit_identical": {"type": "boolean"}, "exact_zeros": _COUNT}),
        "recommendation": _TEXT, "advice": {"enum": ["matters", "small", "undecided", "undefined"]}, "threshold": _RATE,
        "ci": _maybe(GATE), "stages": _maybe({"type": "array", "items": STAGE}), "stopped": _maybe(_TEXT),
        "top_tokens": _maybe({"type": "array", "items": {"type": "object"}}), "recent_mass": _maybe(_RATE),
        "where_from": _TEXT, "prediction_note": _maybe(_TEXT), "length_note": _maybe(_TEXT), "too_few": _maybe(_TEXT),
        "copies": _maybe({"type": "array", "items": _object({"file": _TEXT, "copy_of": _TEXT})}),
        "learned_sink_mass": _maybe(_RATE),
    }),
}
"""The schema itself (a JSON object)."""


if __name__ == "__main__":
    import json

    print(json.dumps(SCHEMA, indent=1, ensure_ascii=False))
