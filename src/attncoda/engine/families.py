"""Which architecture families the capture measures: every text causal-LM and masked-LM family of the installed
transformers, built as a tiny random model and put through the capture.

For each model type in transformers' ``MODEL_FOR_CAUSAL_LM_MAPPING_NAMES`` and ``MODEL_FOR_MASKED_LM_MAPPING_NAMES``
(a type in both counts as a masked LM, its usual head), :func:`try_family`

1. shrinks the family's default config (:data:`SIZES`: 2 layers, 4 heads, width 32, a vocabulary of 256) and builds the
   model from it, with random weights, on the CPU (no download, no network);
2. runs the capture's self-check (:func:`attncoda.engine.capture_check.compare`): one window through the capture path
   against the model's own forward pass;
3. computes the signatures' sums over :data:`WINDOWS` windows of :data:`LENGTH` random tokens through the capture.

and records one of three outcomes:

- ``supported``: the capture equals the forward (within :data:`~attncoda.engine.capture_check.TOLERANCE`) and the
  signatures were computed, by the score path or the eager one;
- ``refused``: the capture stops, with its one-line reason (encoder-decoder, soft-capped logits, attention that
  does not go through transformers' interface and returns no weights, a capture that differs from the forward);
- ``not built``: the shrunk config could not be built into a model that runs, and why (the reason's first line).

A family with a sliding window records it: rows longer than the window are refused by the signatures
(:func:`attncoda.engine.signatures.compute_spec`), since such a row would not span keys ``0..t``.

``python -m attncoda.engine.families`` writes :data:`TABLE` (JSON) and :data:`PAGE` (the book's table of families);
``tests/engine/test_families.py`` holds both to the installed transformers, so a new pin asks for a new table.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import sys
import warnings
from pathlib import Path

from .capture_check import TOLERANCE

TABLE = Path("data/families/families.json")
"""The table of families, relative to the repository root."""
PAGE = Path("book/families.md")
"""The book's page that shows it, generated from :data:`TABLE`."""
LENGTH = 32
"""Tokens per window of the check."""
WINDOWS = 2
"""Windows whose signature sums each family computes."""
MAX_PARAMETERS = 20_000_000
"""A shrunk model with more parameters than this is not built (a size its config kept that :data:`SIZES` misses)."""
SIZES = {
    "hidden_size": 32, "n_embd": 32, "d_model": 32, "embed_dim": 32, "dim": 32, "embedding_size": 32, "n_embed": 32,
    "num_attention_heads": 4, "n_head": 4, "n_heads": 4, "num_heads": 4,
    "num_key_value_heads": 2, "num_kv_heads": 2, "multi_query_group_num": 2,
    "head_dim": 8, "kv_channels": 8, "attention_head_size": 8, "qk_rope_head_dim": 4, "qk_nope_head_dim": 4, "v_head_dim": 8,
    "kv_lora_rank": 16, "q_lora_rank": 16,
    "intermediate_size": 64, "n_inner": 64, "ffn_dim": 64, "d_ff": 64, "ffn_hidden_size": 64, "moe_intermediate_size": 32,
    "shared_expert_intermediate_size": 32, "expert_intermediate_size": 32,
    "num_hidden_layers": 2, "n_layer": 2, "n_layers": 2, "num_layers": 2,
    "vocab_size": 256, "max_position_embeddings": 128, "n_positions": 128, "n_ctx": 128,
    "num_local_experts": 4, "num_experts": 4, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1,
    "moe_topk": 2, "first_k_dense_replace": 1,
    "decoder_attention_heads": 4, "encoder_attention_heads": 4, "decoder_layers": 2, "encoder_layers": 2,
    "decoder_ffn_dim": 64, "encoder_ffn_dim": 64,
}
"""The size fields a shrunk config gets, where the family's config has them."""
OUTCOMES = ("supported", "refused", "not built")


def text_families() -> dict[str, str]:
    """Every text causal-LM and masked-LM model type of the installed transformers, each with its kind
    (``causal`` or ``masked``; a type in both mappings counts as ``masked``)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_FOR_MASKED_LM_MAPPING_NAMES

    kinds = {t: "causal" for t in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES}
    kinds.update({t: "masked" for t in MODEL_FOR_MASKED_LM_MAPPING_NAMES})
    return dict(sorted(kinds.items()))


LAYER_COUNTS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers")


def shrunk_config(model_type: str, layers: bool = True):
    """The family's default config with :data:`SIZES` put in its constructor (and in a text sub-config's), leaving
    out read-only properties; ``layers=False`` keeps the family's own layer count and layer types (for configs whose
    per-layer lists must match it)."""
    from transformers import AutoConfig

    default = AutoConfig.for_model(model_type)
    settable = {k: v for k, v in SIZES.items() if not isinstance(getattr(type(default), k, None), property)}
    if not layers:
        settable = {k: v for k, v in settable.items() if k not in LAYER_COUNTS}
    kwargs = {k: v for k, v in settable.items() if hasattr(default, k)}
    special = [v for k, v in default.to_dict().items() if k.endswith("_token_id") and isinstance(v, int)]
    if "vocab_size" in kwargs and special:  # a special token's id must stay inside the vocabulary
        kwargs["vocab_size"] = max(SIZES["vocab_size"], 1 + max(special))
    if kwargs.get("num_key_value_heads") and getattr(default, "num_key_value_heads", None) is None:
        kwargs.pop("num_key_value_heads")  # a family without grouped queries keeps None
    for name in ("text_config", "decoder"):
        sub = getattr(default, name, None)
        if sub is not None and hasattr(sub, "to_dict"):
            kwargs[name] = {**sub.to_dict(), **{k: v for k, v in SIZES.items() if hasattr(sub, k)}}
    if layers and not isinstance(getattr(type(default), "layer_types", None), property) and getattr(default, "layer_types", None) is not None:
        kwargs["layer_types"] = list(default.layer_types[:2]) if len(default.layer_types) >= 2 else None
    return type(default)(**kwargs)


def _quiet():
    """Silence transformers' and Python's warnings while a family is tried (hundreds of configs complain)."""
    stack = contextlib.ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    logging.getLogger("transformers").setLevel(logging.ERROR)
    return stack


def _readable(config, name: str) -> bool:
    """Whether ``config.name`` reads as a positive number (a per-layer attribute raises when read globally)."""
    try:
        return bool(getattr(config, name, None))
    except Exception:  # noqa: BLE001
        return False


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (f"{type(err).__name__}: {text[0]}" if text else type(err).__name__)[:300]


def build(model_type: str, kind: str):
    """A tiny random model of the family (eval mode, float32, eager attention) whose own forward pass runs on one
    window, or raise with why not."""
    import transformers as tf

    auto = tf.AutoModelForMaskedLM if kind == "masked" else tf.AutoModelForCausalLM
    try:
        return _built(auto, shrunk_config(model_type))
    except Exception:  # noqa: BLE001: a config whose per-layer lists must match its layer count keeps them (its error is then the one told)
        return _built(auto, shrunk_config(model_type, layers=False))


def _built(auto, config):
    import torch

    with torch.device("meta"):
        sized = auto.from_config(config)
    count = sum(p.numel() for p in sized.parameters())
    if count > MAX_PARAMETERS:
        raise ValueError(f"the shrunk config still has {count:,} parameters")
    torch.manual_seed(0)
    model = auto.from_config(config, attn_implementation="eager").eval()
    vocab = int(getattr(config.get_text_config() if hasattr(config, "get_text_config") else config, "vocab_size", SIZES["vocab_size"]) or SIZES["vocab_size"])
    ids = torch.randint(4, min(vocab, SIZES["vocab_size"]), (1, LENGTH), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        model.base_model(input_ids=ids, attention_mask=torch.ones_like(ids))  # the family's own forward runs
    return model, config


def try_family(model_type: str, kind: str) -> dict:
    """One row of the table: the family, its kind, its outcome, and what stands behind it."""
    import torch

    from .capture import CaptureError
    from .capture_check import compare, failure
    from .models import LoadedModel, ModelInfo, attention_window, default_sink, is_encoder
    from .score_capture import learned_sinks, score_path_reason
    from .signatures import SignatureAccumulator, capture_into, sink_positions, virtual_parts

    row = {"family": model_type, "kind": kind, "outcome": "not built", "path": None, "learned_sink": None, "window": None,
           "largest_difference": None, "reason": ""}
    with _quiet():
        try:
            model, config = build(model_type, kind)
            text = config.get_text_config() if hasattr(config, "get_text_config") else config
            vocab = int(getattr(text, "vocab_size", SIZES["vocab_size"]) or SIZES["vocab_size"])
            ids = torch.randint(4, min(vocab, SIZES["vocab_size"]), (WINDOWS, LENGTH), generator=torch.Generator().manual_seed(0))
        except Exception as err:  # noqa: BLE001: any failure to build or run the family's own forward is its row's reason
            row["reason"] = _first_line(err)
            return row
        backbone = model.base_model
        row["window"] = attention_window(text)
        sink = default_sink(model_type)
        causal = not is_encoder(model_type, config)
        try:
            heads = next((int(getattr(text, k)) for k in ("num_attention_heads", "n_head", "n_heads", "num_heads") if _readable(text, k)), 0)
            layers = next((int(getattr(text, k)) for k in LAYER_COUNTS if _readable(text, k)), 0)
            if not heads or not layers:
                raise CaptureError("its config names no attention heads or layers: not an attention model")
            info = ModelInfo(name=model_type, source="tiny random", revision=None, architecture=model_type, layers=layers, heads=heads,
                             causal=causal, vision=False, weights_sha256="random", default_sink=sink)
            loaded = LoadedModel(info=info, model=model, processor=None)
            row["learned_sink"] = learned_sinks(backbone)
            row["path"] = "eager" if score_path_reason(backbone) else "scores beside sdpa"
            found = compare(loaded, ids[:1])
            row["largest_difference"] = found.largest
            if not found.passed:
                raise CaptureError(failure(found))
            virtual = virtual_parts(sink)
            parts = sink_positions("first", LENGTH, virtual=virtual) if sink != "learned" else (0,)
            acc = SignatureAccumulator(info.layers, info.heads, LENGTH, causal, parts, eps_values=(), virtual=virtual)
            capture, _ = capture_into(backbone, acc)
            with torch.inference_mode(), capture:
                loaded.forward(ids)
            if not acc.rows.all():
                raise CaptureError(f"{int((acc.rows == 0).sum())} of its {layers} layers gave no attention rows (layers that share one "
                                   "attention module, or fewer attention modules than layers)")
            if not torch.isfinite(torch.as_tensor(acc.sums)).all():
                raise CaptureError("the signature sums are not finite")
        except Exception as err:  # noqa: BLE001: the capture's one-line reason (or an unexpected failure, named as such)
            row["outcome"], row["reason"] = "refused", _first_line(err)
            return row
    row["outcome"] = "supported"
    return row


def table(families: dict[str, str] | None = None, progress: bool = False) -> dict:
    """Every family tried (:func:`try_family`), with the versions that made the table and its counts."""
    import torch
    import transformers

    rows = []
    for i, (model_type, kind) in enumerate((families or text_families()).items(), 1):
        try:
            rows.append(try_family(model_type, kind))
        except Exception as err:  # noqa: BLE001: a family that breaks the trial itself is a row, not the end of the table
            rows.append({"family": model_type, "kind": kind, "outcome": "not built", "path": None, "learned_sink": None, "window": None,
                         "largest_difference": None, "reason": _first_line(err)})
        if progress:
            print(f"[{i}] {model_type}: {rows[-1]['outcome']} {rows[-1]['reason'][:100]}", file=sys.__stderr__, flush=True)
    counts = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    return {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0], "length": LENGTH, "windows": WINDOWS,
            "tried": len(rows), "counts": counts, "families": rows}


def page(data: dict) -> str:
    """The book's page: the counts, then one row per family (Markdown)."""
    c = data["counts"]
    refused = [r for r in data["families"] if r["outcome"] == "refused"]
    lines = [
        "# Architecture families",
        "",
        "<!-- Generated by `python -m attncoda.engine.families` from data/families/families.json; do not edit. -->",
        "",
        f"Every text causal-LM and masked-LM family of transformers {data['transformers']} was built as a tiny random model "
        f"(2 layers, 4 heads, width 32) and put through the capture.",
        "",
        f"- **{data['tried']}** families tried: **{c['supported']}** supported, **{c['refused']}** refused, **{c['not built']}** not built.",
        f"- *Supported*: on one window, the rows the capture measures equal the model's own attention weights, and its forward pass "
        f"equals the model's, within {TOLERANCE['float32']:g} relative (the largest difference is shown); the signatures were computed.",
        "- *Refused*: the capture stops with the reason shown.",
        "- *Not built*: the shrunk config did not give a model that runs; the reason is the error's first line.",
        "- A *window* is a sliding attention window: rows longer than it are refused, since they would not span every earlier key.",
        "",
        "Refused families, by their reason:" if refused else "Refused families: none.",
        "",
        *(f"- *{group}*: {', '.join(names)}." for group, names in refusal_groups(refused).items()),
        "",
        "| family | kind | outcome | capture path | learned sink | window | largest difference | reason |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in data["families"]:
        diff = "" if r["largest_difference"] is None else f"{r['largest_difference']:.1e}"
        sink = "" if r["learned_sink"] is None else ("yes" if r["learned_sink"] else "no")
        reason = _escaped(r["reason"])
        lines.append(f"| {r['family']} | {r['kind']} | {r['outcome']} | {r['path'] or ''} | {sink} | {r['window'] or ''} | {diff} | {reason} |")
    return "\n".join(lines) + "\n"


REFUSAL_GROUPS = {
    "gave no attention rows": "layers without rows of their own",
    "more attention modules than": "more attention modules than layers (cross-attention)",
    "of shape": "attention of another shape than the config's",
    "returned no attention weights under eager": "no eager attention weights",
    "no attention weights to compare": "no weights to check the captured rows against",
    "not an attention model": "no attention",
    "encoder-decoder": "encoder-decoder models",
    "attends both ways": "attends both ways, taken for causal",
    "learned sink in some": "learned sinks in some layers only",
    "never called the attention interface": "never calls the attention interface",
}
"""The page's groups of refusals: the first of these phrases a reason holds names its group."""


def refusal_groups(refused: list[dict]) -> dict[str, list[str]]:
    """``{group: families}`` of the refused rows, in :data:`REFUSAL_GROUPS` order; a reason holding none of its phrases
    goes under "other".

    >>> refusal_groups([{"family": "a", "reason": "CaptureError: encoder-decoder models are not covered"},
    ...                 {"family": "b", "reason": "CaptureError: something new"}])
    {'encoder-decoder models': ['a'], 'other': ['b']}
    """
    groups: dict[str, list[str]] = {}
    for r in refused:
        group = next((g for phrase, g in REFUSAL_GROUPS.items() if phrase in r["reason"]), "other")
        groups.setdefault(group, []).append(r["family"])
    order = [*REFUSAL_GROUPS.values(), "other"]
    return dict(sorted(groups.items(), key=lambda kv: order.index(kv[0])))


def _escaped(text: str) -> str:
    r"""An error's text as plain Markdown table text: on one line, every character Markdown or HTML would read escaped,
    and backticks as plain quotes (a reason cut short can hold one unmatched).

    >>> print(_escaped("a <class> | `b` *c*"))
    a \<class\> \| 'b' \*c\*
    """
    out = text.replace("\\", "\\\\").replace("\n", " ").replace("`", "'")
    for ch in "*_<>[]|{}#!$":
        out = out.replace(ch, "\\" + ch)
    return out


def main(argv=None) -> int:
    from ..base.files import atomic_write_bytes, atomic_write_json
    from ..base.paths import repo_root

    parser = argparse.ArgumentParser(prog="python -m attncoda.engine.families", description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", help="model types to try (default: every text causal-LM and masked-LM family)")
    args = parser.parse_args(argv)
    every = text_families()
    unknown = [f for f in args.families if f not in every]
    if unknown:
        parser.error(f"not a text causal-LM or masked-LM family of this transformers: {', '.join(unknown)}")
    data = table({f: every[f] for f in args.families} if args.families else None, progress=True)
    if args.families:
        print(json.dumps(data, indent=1))
        return 0
    root = repo_root()
    atomic_write_json(root / TABLE, data, strict=True)
    atomic_write_bytes(root / PAGE, page(data).encode())
    print(f"{data['tried']} families: {data['counts']}; wrote {TABLE} and {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
