"""Text shown to a person: a model's name or a folder's path can hold any character, and a newline or a terminal
escape in one would let it fake a line of output (``attncoda: ok``) or recolour the terminal. Every such name is shown
with its control characters written out, as Python writes them in a string literal.
"""

from __future__ import annotations

import unicodedata


def visible(text, keep: str = "") -> str:
    """``text`` with every control character (Unicode categories Cc and Cf: newlines, tabs, escapes, bidirectional
    overrides) written as its escape, ``\\n``, ``\\x1b``, ``\\u202e``, except those in ``keep``; every other
    character stays itself.

    Examples
    --------
    >>> visible("evil\\nattncoda: ok\\x1b[31m")
    'evil\\\\nattncoda: ok\\\\x1b[31m'
    >>> visible("minilm-l6 ρ ≥ 0.7")
    'minilm-l6 ρ ≥ 0.7'
    >>> visible("one paragraph.\\n\\nAnother\\x1b[31m", keep="\\n")
    'one paragraph.\\n\\nAnother\\\\x1b[31m'
    """
    text = str(text)
    if all(unicodedata.category(c) not in ("Cc", "Cf") or c in keep for c in text):
        return text
    return "".join(repr(c)[1:-1] if unicodedata.category(c) in ("Cc", "Cf") and c not in keep else c for c in text)
