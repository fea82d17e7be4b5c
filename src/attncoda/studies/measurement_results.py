"""The measurement chapter's typed results: what :func:`attncoda.studies.measurement.measure` returns.

A :class:`Measurement` holds one model's :class:`Summary` over seeds and one :class:`SeedMeasure` per seed (the
first with the detail tables 5-8 and the witness triple). Each class has ``to_json`` (the results file's content,
unchanged from the dicts it replaces) and ``from_json``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from ..math.verdicts import Reversal
from .reversal import CLASSICAL


def _reversals(data: dict | None) -> dict[str, Reversal] | None:
    return None if data is None else {m: Reversal(**r) for m, r in data.items()}


@dataclass(frozen=True)
class MeanSd:
    """Mean and standard deviation (ddof = 1; 0 for one value) over seeds."""

    mean: float
    sd: float

    @classmethod
    def of(cls, values) -> MeanSd:
        """Examples
        --------
        >>> MeanSd.of([1.0, 3.0])
        MeanSd(mean=2.0, sd=1.4142135623730951)
        """
        import numpy as np

        return cls(float(np.mean(values)), float(np.std(values, ddof=1)) if len(values) > 1 else 0.0)


@dataclass(frozen=True)
class EpsSweep:
    """Are verdicts bit-identical across the ε sweep (:func:`attncoda.studies.reversal.eps_sweep`)?"""

    eps_values: list
    exact_zeros: int
    identical: dict
    all_identical: bool
    max_differing_verdicts: dict


@dataclass(frozen=True)
class PathReading:
    """One seed on the probability path: signature sink mass, the largest log difference from the log path, reversals."""

    signature_sink_mass: float
    max_log_difference: float
    reversal: dict  # metric -> Reversal

    @classmethod
    def from_json(cls, data: dict) -> PathReading:
        return cls(data["signature_sink_mass"], data["max_log_difference"], _reversals(data["reversal"]))


@dataclass(frozen=True)
class ContentAudit:
    """Table 6: the small-part share of ``d_A^⊥`` (both paths) and the rival-geometry agreement with JS′."""

    share_below_small_part: float
    share_below_small_part_probability_path: float
    spearman: float
    nn_agreement: float
    cross_ari: float


@dataclass(frozen=True)
class TemperatureStakes:
    """Table 8, one metric: verdict flips and prune-set retention under each logit temperature."""

    temperatures: list
    flip_rates: list
    flip_max: float
    retention: list
    retention_min: float


@dataclass(frozen=True)
class SinkSetStakes:
    """Table 8, sink set: verdict flip rates of JS′ and ``d_A^⊥`` between the default and an alternative set."""

    default: str
    alternative: str
    js: float
    content: float


@dataclass(frozen=True)
class Witness:
    """A sampled triple on which cosine, JS and Euclidean all reverse (Theorem 1), with its heads and rows."""

    triple: list
    share_of_triples: float
    min_relative_gap: float
    heads: list
    rows: list

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class SeedMeasure:
    """Every number of one seed's signatures (:func:`attncoda.studies.measurement.measure_signatures`); the detail
    fields (Tables 5-8 and the witness) are set on the first seed only (``details``)."""

    seed: int
    signature_kind: str
    row_sink_mass: float
    signature_sink_mass: float
    reversal: dict  # metric -> Reversal
    probability_path: PathReading
    eps_sweep: EpsSweep
    lemma1_max_relative_residual: float
    collapse_disagreement: float
    layers: dict  # statistic -> per-layer means
    details: bool = False
    arithmetic_reversal: dict | None = None  # metric -> Reversal
    audit: ContentAudit | None = None
    taxonomy_ari: dict | None = None  # metric -> ARI
    temperature: dict | None = None  # metric -> TemperatureStakes
    sink_set: SinkSetStakes | None = None
    witness: Witness | None = None

    def to_json(self) -> dict:
        out = asdict(self)
        del out["details"]
        if not self.details:
            for k in ("arithmetic_reversal", "audit", "taxonomy_ari", "temperature", "sink_set", "witness"):
                del out[k]
        return out

    def detail_tables(self) -> dict:
        """Tables 5-8 of this seed, as the audits chapter's results file holds them (a detail seed only)."""
        if not self.details:
            raise ValueError(f"seed {self.seed} carries no detail tables (only the first seed does)")
        return {"table5": self.taxonomy_ari,
                "table6": {**asdict(self.audit), "hellinger": self.reversal["hellinger"].rate, "fisher_rao": self.reversal["fisher_rao"].rate},
                "table7": {"arithmetic": {m: self.arithmetic_reversal[m].rate for m in CLASSICAL}, "aitchison": {m: self.reversal[m].rate for m in CLASSICAL}},
                "table8": {"temperature": {m: asdict(t) for m, t in self.temperature.items()}, "sink_set": asdict(self.sink_set)}}

    @classmethod
    def from_json(cls, data: dict) -> SeedMeasure:
        details = "witness" in data
        return cls(
            data["seed"], data["signature_kind"], data["row_sink_mass"], data["signature_sink_mass"], _reversals(data["reversal"]),
            PathReading.from_json(data["probability_path"]), EpsSweep(**data["eps_sweep"]), data["lemma1_max_relative_residual"],
            data["collapse_disagreement"], data["layers"], details,
            _reversals(data.get("arithmetic_reversal")), ContentAudit(**data["audit"]) if details else None, data.get("taxonomy_ari"),
            {m: TemperatureStakes(**t) for m, t in data["temperature"].items()} if details else None,
            SinkSetStakes(**data["sink_set"]) if details else None, Witness(**data["witness"]) if data.get("witness") else None,
        )


@dataclass(frozen=True)
class PathSummary:
    """The probability path's headline numbers over seeds."""

    signature_sink_mass: MeanSd
    reversal: dict  # metric -> MeanSd


@dataclass(frozen=True)
class Summary:
    """Mean ± sd over seeds of the headline numbers (:func:`attncoda.studies.measurement.summarize`)."""

    row_sink_mass: MeanSd
    signature_sink_mass: MeanSd
    reversal: dict  # metric -> MeanSd
    probability_path: PathSummary
    path_max_log_difference: float
    collapse_disagreement: MeanSd
    eps_bit_identical: bool
    eps_exact_zeros: int
    lemma1_max_relative_residual: float

    @classmethod
    def from_json(cls, d: dict) -> Summary:
        ms = lambda x: MeanSd(**x)  # noqa: E731
        return cls(ms(d["row_sink_mass"]), ms(d["signature_sink_mass"]), {m: ms(v) for m, v in d["reversal"].items()},
                   PathSummary(ms(d["probability_path"]["signature_sink_mass"]), {m: ms(v) for m, v in d["probability_path"]["reversal"].items()}),
                   d["path_max_log_difference"], ms(d["collapse_disagreement"]), d["eps_bit_identical"], d["eps_exact_zeros"],
                   d["lemma1_max_relative_residual"])


@dataclass(frozen=True)
class Measurement:
    """One model's numbers for the measurement chapter: its facts, protocol, summary and per-seed readings.

    ``result_name`` (the results file's name), ``wall_time_s`` and the predictors' verdicts (``predictor``, set by
    the chapter) are filled in after the measurement; they are written with it.
    """

    model: str
    model_info: dict
    protocol: dict
    weights_sha256: str
    layers: int
    heads: int
    sink: list
    seeds: list
    n_triples: int
    summary: Summary
    per_seed: list  # SeedMeasure, in seed order
    wall_time_s: float | None = None
    result_name: str | None = None
    predictor: dict = field(default_factory=dict)

    @property
    def first(self) -> SeedMeasure:
        """The first seed's readings (the one with the detail tables)."""
        return self.per_seed[0]

    @property
    def causal(self) -> bool:
        return bool(self.protocol["causal"])

    def to_json(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["summary"] = asdict(self.summary)
        out["per_seed"] = [s.to_json() for s in self.per_seed]
        for k in ("wall_time_s", "result_name"):
            if out[k] is None:
                del out[k]
        if not self.predictor:
            del out["predictor"]
        return out

    @classmethod
    def from_json(cls, data: dict) -> Measurement:
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        values["summary"] = Summary.from_json(data["summary"])
        values["per_seed"] = [SeedMeasure.from_json(s) for s in data["per_seed"]]
        return cls(**values)
