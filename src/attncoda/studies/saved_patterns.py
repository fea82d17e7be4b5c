"""``attncoda audit --patterns``: the audit of attention a reader already saved, without the model.

Each file is one independent sample, as a seed is for a model: its windows give one set of signatures
(:func:`attncoda.engine.patterns.signatures_from_patterns`, labelled with the file's place as its seed, which draws
its head triples) and one map of where attention goes (:class:`attncoda.engine.attention_map.AttentionMapAccumulator`
over every row). What a file cannot give is said, not guessed: it holds no tokens, so attention is not ranked by token.
"""

from __future__ import annotations

from dataclasses import replace


def distinct_files(files) -> tuple[list, list[dict]]:
    """The files whose bytes differ, in the order given, and each copy left out as ``{"file", "copy_of"}``: a file
    given twice (by a copy or a link) is one sample, not two (its rate would narrow the interval it cannot inform)."""
    from ..base.files import content_sha256
    from ..engine.pattern_files import check_file

    seen, kept, copies = {}, [], []
    for path in files:
        check_file(path)
        digest = content_sha256(path)
        if digest in seen:
            copies.append({"file": str(path), "copy_of": str(seen[digest])})
        else:
            seen[digest] = path
            kept.append(path)
    return kept, copies


def patterns_audit_inputs(files, sink: str | None) -> tuple[list, list[dict]]:
    """The signatures and attention maps of each saved file, in the form :func:`attncoda.studies.audit.audit` takes
    from a model (ValueError in one line, naming the file, for a file it cannot use)."""
    import json

    from ..engine.attention_map import AttentionMapAccumulator
    from ..engine.pattern_files import read_patterns
    from ..engine.patterns import pattern_layers, signatures_from_patterns
    from .audit import parse_sink

    name = str(files[0]) if len(files) == 1 else f"{files[0]} and {len(files) - 1} more"
    sigs, maps = [], []
    for seed, path in enumerate(files):
        patterns = read_patterns(path)
        try:
            sig = signatures_from_patterns(patterns, model=name, seed=seed)
            keys = parse_sink(sink, sig)[1]
        except ValueError as err:
            raise ValueError(f"--patterns {path}: {err}") from None
        if sigs and (sig.shape, sig.meta.causal) != (sigs[0].shape, sigs[0].meta.causal):
            raise ValueError(f"--patterns {path} holds {_shape(sig)}, but {files[0]} holds {_shape(sigs[0])}; every file must come from one model "
                             "at one window length")
        layers = pattern_layers(patterns)
        acc = AttentionMapAccumulator(len(layers), sig.shape[-1], bool(sig.meta.causal), keys)
        for i, layer in enumerate(layers):
            acc.update(i, layer)
        sigs.append(sig)
        maps.append(json.loads(json.dumps(acc.finish())))
    return sigs, maps


def _shape(sig) -> str:
    layers, heads, keys = sig.shape
    return f"{layers} layers × {heads} heads × {keys} keys ({'causal' if sig.meta.causal else 'bidirectional'})"


def as_patterns_report(report, files: int, copies: list | None = None):
    """A report made from saved files, saying so: no token ranking (a file holds no tokens), where the map comes from,
    an interval over files, not seeds, and the copies counted once."""
    from ..engine.attention_map import RECENT
    from .audit import recommend

    kind = report.reversal.interval_kind
    if files == 1:
        kind = ("95 % Wilson interval over the sampled triples of one file (text not resampled: save patterns from more text samples "
                "and pass each file for the full uncertainty)")
    else:
        kind = kind.replace(f"over {files} seeds", f"over {files} files")
    report = replace(report, top_tokens=None, reversal=replace(report.reversal, interval_kind=kind), copies=copies or None,
                     where_from=f"every row of every layer and head of the saved patterns; keys within {RECENT} positions of the query set apart")
    return replace(report, recommendation=recommend(report))
