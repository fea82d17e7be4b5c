"""Sentence length on a rendered page: what a reader must hold in one breath.

A page's prose comes as blocks (a paragraph, a list item, a caption, a heading), with tables, code and math already
replaced by one placeholder word each; an API page's parameter lists count as tables. Each block is split into sentences at a full stop, question or exclamation mark followed by a space and a
letter, a digit, an opening bracket or a path's first character (a sentence may start with a model's name, such as
"minilm-l6" or "/home/me/my-model", which the site test shows as "<test folder>/tiny-bert"); abbreviations such as "e.g." and "et al." do not end a sentence. A word is a
run of characters between spaces that holds a letter or a digit.
"""

from __future__ import annotations

import re

LIMIT = 45
"""No sentence on any page may run over this many words."""

ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "cf.", "vs.", "Fig.", "Eq.", "approx.", "resp.", "no.")

_END = re.compile(r"(?<=[.!?])[\"”’)]?\s+(?=[A-Za-z0-9(\[“\"*_$/~<])")
_WORD = re.compile(r"\S*[A-Za-z0-9]\S*")


def sentences(block: str) -> list[str]:
    """The sentences of one block of prose.

    >>> sentences("The share is 0.35. It falls, e.g. at 3 × 3. Why? Because only 1 × 1 grew a sink.")
    ['The share is 0.35.', 'It falls, e.g. at 3 × 3.', 'Why?', 'Because only 1 × 1 grew a sink.']
    >>> sentences("It lies below at every K. /home/me/bert has no [SEP] heads.")
    ['It lies below at every K.', '/home/me/bert has no [SEP] heads.']
    """
    text = " ".join(block.split())
    masked = text
    for abbreviation in ABBREVIATIONS:
        masked = masked.replace(abbreviation, abbreviation.replace(".", "\0"))
    cuts, start = [], 0
    for match in _END.finditer(masked):
        cuts.append(text[start:match.start()].strip())
        start = match.end()
    cuts.append(text[start:].strip())
    return [c for c in cuts if c]


def words(sentence: str) -> int:
    """How many words a sentence has (runs of non-space characters that hold a letter or a digit).

    >>> words("The share falls with size (0.35 → 0.13 → 0.05).")
    8
    """
    return len(_WORD.findall(sentence))


def long_sentences(blocks: list[str], limit: int = LIMIT) -> list[tuple[int, str]]:
    """Every sentence over ``limit`` words in ``blocks``, with its word count."""
    return [(words(s), s) for block in blocks for s in sentences(block) if words(s) > limit]


BLOCKS_SCRIPT = """
const root = document.querySelector('main') || document.body;
const skip = 'table, pre, code, mjx-container, .math, script, style, .cell_input, .cell_output .output, nav, .headerlink';
const blocks = [];
for (const el of root.querySelectorAll('p, li, dt, dd, figcaption, caption, h1, h2, h3, h4, h5, h6')) {
  if (el.closest('table, pre, nav, .cell_input, .toctree-wrapper, .bd-toc, .prev-next-area, dl.field-list')) continue;
  if (el.tagName === 'LI' && el.querySelector('p, ul, ol')) continue;
  const copy = el.cloneNode(true);
  copy.querySelectorAll(skip).forEach(n => n.replaceWith(' X '));
  blocks.push(copy.textContent);
}
return blocks;
"""
"""JavaScript that returns a rendered page's prose blocks (see the module's docstring); math, code and tables are
replaced by one placeholder word, so a formula counts as a word, not as many."""


def html_blocks(html: str) -> list[str]:
    """The same blocks as :data:`BLOCKS_SCRIPT`, from a page's HTML (for reading a built site without a browser)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    root = soup.find("main") or soup.body
    blocks = []
    for el in root.find_all(["p", "li", "dt", "dd", "figcaption", "caption", "h1", "h2", "h3", "h4", "h5", "h6"]):
        if el.find_parent(["table", "pre", "nav"]) or el.find_parent(class_=["cell_input", "toctree-wrapper", "bd-toc", "prev-next-area", "field-list"]):
            continue
        if el.name == "li" and el.find(["p", "ul", "ol"]):
            continue
        copy = BeautifulSoup(str(el), "html.parser")
        for node in copy.select("table, pre, code, mjx-container, .math, script, style, .headerlink"):
            node.replace_with(" X ")
        blocks.append(copy.get_text())
    return blocks
