"""Typed results that round-trip through JSON."""

from __future__ import annotations

from dataclasses import asdict, fields


class JsonRecord:
    """``to_json`` and ``from_json`` for a flat dataclass whose fields are plain JSON values (a missing field reads as None)."""

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict):
        return cls(**{f.name: data.get(f.name) for f in fields(cls)})
