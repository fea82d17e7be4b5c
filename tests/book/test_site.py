"""The rendered site, opened page by page in a real browser (Debian's headless Chromium through Selenium).

The book is built from every chapter run on the small profile (per-model chapters on a tiny model saved
by the test) into a temporary folder, with the same code path as `make book`. Each page fails the test on:
a JavaScript error in the console, a broken internal link or image, a raw glue placeholder, an error or
traceback output, math left as raw TeX, or a figure that did not render; and on what a reader saw wrong
(:func:`reader_problems`): progress bars or log lines, a machine path (in the page or its downloadable
notebook), a visible nan, numbers in adjacent cells closer than 8 px, a table, equation or code block wider
than the column without a scroll box, a figure shown so small that its type is under 9 px, an empty
section, notation outside math, a sentence over 45 words in the prose (tables, code and math aside; :mod:`sentences`); and on a menu that does not work (:func:`menu_problems`: on a phone the ☰ and
contents buttons must open the book's and the page's tables of contents, on a laptop ☰ must fold the sidebar away). Every check runs at a laptop's width (1,366 × 900) and at a phone's (390 × 844),
and a screenshot of each is kept. A page that only redirects (the root index.html) is checked for its target instead.
"""

import re
import shutil
from pathlib import Path

import pytest

from attncoda.face.chapter_run import run_chapter
from attncoda.face.chapters import CHAPTERS
from sentences import BLOCKS_SCRIPT, LIMIT, long_sentences

SHOTS = Path(__file__).parents[2] / "_build" / "screenshots"


def is_image_path(alt: str) -> bool:
    """Whether an image's alt text is the path a page builder fills in when a figure has none (``../_images/x.png``),
    not a description (which may name a model by a Hub id or a folder, slashes and all)."""
    import re

    return bool(re.search(r"(^|/)_images/|^\.\./|\.(png|svg|jpe?g)$", alt.strip()))


def test_the_alt_text_check_tells_a_path_from_a_description():
    assert is_image_path("../_images/abc123.png") and is_image_path("_images/fig.svg")
    assert not is_image_path("meta-llama/Llama-3.2-1B: held-out perplexity of every prune set, on a log axis.")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from tiny_models import save_tiny, save_tiny_series

    import os

    from attncoda.face.book import build_book, stage_sources

    if os.environ.get("ATTNCODA_SITE"):  # check a site already built, e.g. the full book: ATTNCODA_SITE=_build/html
        yield Path(os.environ["ATTNCODA_SITE"]).resolve()
        return
    root = tmp_path_factory.mktemp("site")
    patch = pytest.MonkeyPatch()
    patch.setenv("ATTNCODA_OUTPUT", str(root / "out"))
    patch.setenv("ATTNCODA_CACHE", str(root / "cache"))
    try:
        stage = stage_sources()
        for chapter in CHAPTERS.values():
            if chapter.series:
                model = ",".join(str(f) for f in save_tiny_series(chapter.test_family, root / "series"))
            else:
                model = str(save_tiny(chapter.test_family, root / f"tiny-{chapter.test_family}")) if chapter.per_model else None
            page = run_chapter(chapter.key, model=model, profile="small", parameters={"results_dir": str(root / "results")},
                               output=stage / "notebooks" / f"{chapter.notebook}.ipynb", progress=False, stage=True)
            # The fixture's own inputs (tiny models, a results folder) live in a temporary folder, which the pages would
            # show among their parameters; a book build injects no such path (tests/face/test_trust.py checks that).
            page.write_text(page.read_text().replace(str(root), "<test folder>"))
        yield build_book(run=False)
    finally:
        patch.undo()


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver

    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        pytest.fail("the site test needs a real browser: apt-get install chromium chromium-driver (make test does this as root)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1366,900", "--allow-file-access-from-files",
                "--disable-background-networking", "--disable-component-update", "--no-first-run"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    yield driver
    driver.quit()


PAGE_CHECK = """
const done = arguments[arguments.length - 1];
const typeset = (window.MathJax && MathJax.startup && MathJax.startup.promise) ? MathJax.startup.promise : Promise.resolve();
const ready = Promise.race([typeset.then(() => true), new Promise(r => setTimeout(() => r(false), 20000))]);
ready.then((typesetDone) => { try {
  const main = document.querySelector('main') || document.body;
  const text = main.innerText;
  const links = [...document.querySelectorAll('a[href]')].map(a => a.href).filter(h => h.startsWith('file:'));
  const images = [...main.querySelectorAll('img')].map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0, alt: i.alt}));
  done({
    text: text,
    links: links,
    images: images,
    math: document.querySelectorAll('mjx-container').length,
    rawMath: [...main.querySelectorAll('.math')].filter(e => !e.querySelector('mjx-container')).length,
    errors: main.querySelectorAll('.output.error, .output.traceback, .cell_output .traceback').length,
    typeset: typesetDone,
    searchBoxes: [...document.querySelectorAll('.search-button-field')].filter(e => e.offsetParent !== null).length,
    boldComputed: [...main.querySelectorAll('p > span.pasted-text')].filter(e => parseInt(getComputedStyle(e).fontWeight) >= 600
                                                                          && getComputedStyle(e.parentElement).fontWeight < 600).length,
    rawCode: (text.match(/`[^`\\n]{1,80}`/g) || []).length,
    fusedCells: fusedCells(main),
    unscrolledWide: unscrolledWide(main),
    clippedCaptions: clippedCaptions(main),
    pageOverflow: pageOverflow(),
    smallImages: [...main.querySelectorAll('.cell_output img, figure img')].filter(i => i.naturalWidth > 0 && i.offsetParent !== null).map(i => ({
      src: i.src.split('/').pop(), ratio: i.getBoundingClientRect().width / i.naturalWidth, visible: visibleShare(i)})),
    emptyHeadings: [...main.querySelectorAll('section')].filter(sec => {
      const kids = [...sec.children].filter(k => !/^H[1-6]$/.test(k.tagName) && k.tagName !== 'SPAN');
      return kids.every(k => !k.innerText.trim() && !k.querySelector('img'));
    }).map(sec => (sec.querySelector('h1,h2,h3,h4,h5,h6') || {innerText: '?'}).innerText.replace('#', '').trim()),
    proseText: proseText(main),
    emptySourceBars: emptySourceBars(main),
    brokenNumbers: brokenNumbers(main),
  });
} catch (e) { done({scriptError: String((e && e.stack) || e)}); } });  // an error here would otherwise leave the call hanging

// Two numbers in adjacent cells of a table row, side by side, whose rendered text boxes are closer than 8 px.
function fusedCells(root) {
  const found = [];
  const textBox = (cell) => { const r = document.createRange(); r.selectNodeContents(cell); return r.getBoundingClientRect(); };
  for (const row of root.querySelectorAll('tr')) {
    const cells = [...row.children];
    for (let i = 0; i + 1 < cells.length; i++) {
      const a = cells[i].innerText.trim(), b = cells[i + 1].innerText.trim();
      if (!/[0-9]$/.test(a) || !/^[-−+]?[0-9.]/.test(b)) continue;
      if (textBox(cells[i + 1]).top >= textBox(cells[i]).bottom - 1) continue;  // stacked, as the scorecard's blocks are: not side by side
      const gap = textBox(cells[i + 1]).left - textBox(cells[i]).right;
      if (gap < 8) found.push(`${a} | ${b} (${gap.toFixed(1)} px)`);
    }
  }
  return found;
}

// A table, display equation or code block wider than the column, with no scroll box of its own around it.
function unscrolledWide(root) {
  const column = root.getBoundingClientRect();
  const found = [];
  for (const el of root.querySelectorAll('table, mjx-container[display="true"], pre')) {
    if (el.scrollWidth <= column.width + 1 && el.getBoundingClientRect().right <= column.right + 1) continue;
    let scrolls = false;
    for (let up = el; up && up !== root; up = up.parentElement) {
      const style = getComputedStyle(up);
      if ((style.overflowX === 'auto' || style.overflowX === 'scroll') && up.getBoundingClientRect().width <= column.width + 1) { scrolls = true; break; }
    }
    if (!scrolls) found.push(`${el.tagName.toLowerCase()} ${Math.round(el.scrollWidth)} px in a ${Math.round(column.width)} px column: ${el.innerText.slice(0, 40)}`);
  }
  return found;
}

// A table caption whose text runs past the box it scrolls in (or past the column): its end is hidden.
function clippedCaptions(root) {
  const column = root.getBoundingClientRect();
  const found = [];
  for (const caption of root.querySelectorAll('caption')) {
    let box = column;
    for (let up = caption.parentElement; up && up !== root; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (style.overflowX === 'auto' || style.overflowX === 'scroll' || style.overflowX === 'hidden') { box = up.getBoundingClientRect(); break; }
    }
    const r = document.createRange(); r.selectNodeContents(caption);
    const text = r.getBoundingClientRect();
    if (text.right > box.right + 1 || text.left < box.left - 1) found.push(`${Math.round(text.width)} px caption in a ${Math.round(box.width)} px box: ${caption.innerText.slice(0, 40)}`);
  }
  return found;
}

// When the page itself is wider than the window (it scrolls sideways), the elements that stick out with no scroll
// box of their own to hold them; the off-canvas sidebars are not the page.
function pageOverflow() {
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth <= width + 1) return [];
  const found = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('.bd-sidebar-secondary, .bd-sidebar-primary') || el.getBoundingClientRect().right <= width + 1) continue;
    let held = false;
    for (let up = el.parentElement; up && !held; up = up.parentElement) {
      held = getComputedStyle(up).overflowX !== 'visible' && up.getBoundingClientRect().right <= width + 1;
    }
    if (!held && !found.some(f => f.contains(el))) found.push(el);  // the outermost element that sticks out
  }
  return found.slice(0, 5).map(el => `${el.tagName.toLowerCase()} reaching ${Math.round(el.getBoundingClientRect().right)} px in a ${width} px window: ${(el.innerText || '').slice(0, 40)}`);
}

// A "Show code cell source" bar over a cell that shows nothing beneath it: clutter that hides no result.
function emptySourceBars(root) {
  return [...root.querySelectorAll('div.cell')].filter(cell => cell.querySelector('details.above-input')).filter(cell => {
    const out = cell.querySelector('.cell_output');
    return !out || (!out.innerText.trim() && !out.querySelector('img, svg, mjx-container, table'));
  }).map(cell => (cell.querySelector('.cell_input') || cell).textContent.trim().split('\\n')[0].slice(0, 60));
}

// A number with an exponent (1e-06) in a table header or an API signature that the browser broke across two lines.
function brokenNumbers(root) {
  const found = [];
  for (const box of root.querySelectorAll('thead th, dt.sig')) {
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      for (const m of node.nodeValue.matchAll(/\\d+(?:\\.\\d+)?e[-+]\\d+/g)) {
        const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top)));
        if (tops.size > 1) found.push(`${m[0]} in "${box.innerText.replace(/\\s+/g, ' ').slice(0, 40)}"`);
      }
    }
  }
  return found;
}

// The share of an image's width a reader sees without scrolling anything sideways: clipped by the boxes it sits in
// (a scroll box, the column) and by the window.
function visibleShare(img) {
  const r = img.getBoundingClientRect();
  let left = Math.max(r.left, 0), right = Math.min(r.right, document.documentElement.clientWidth);
  for (let up = img.parentElement; up; up = up.parentElement) {
    if (getComputedStyle(up).overflowX === 'visible') continue;
    const b = up.getBoundingClientRect();
    left = Math.max(left, b.left); right = Math.min(right, b.right);
  }
  return r.width > 0 ? Math.max(0, right - left) / r.width : 1;
}

// The page's text outside math, code and figures: where TeX-like notation must not appear.
function proseText(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {acceptNode: (n) =>
    n.parentElement.closest('mjx-container, code, pre, script, style, .math') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  let out = '';
  while (walker.nextNode()) out += walker.currentNode.nodeValue + ' ';
  return out;
}
"""

PROGRESS = re.compile(r"\d+(\.\d+)?\s?it/s|s/it\]|\d+%\|| Loading weights|Executing:")
MACHINE_PATH = re.compile(r"(?<![\w.])/(home|root|tmp|work|Users|var/folders|private)/|PosixPath\(|[A-Za-z]:\\\\Users")
UNDEFINED = re.compile(r"(?<![\w-])(nan|NaN)(?![\w-])")
TEX_OUTSIDE_MATH = re.compile(r"\^⊥|\^\\perp|\b[dCρH]_A\b|_A\^|\be\^[-0-9.]")
MIN_FONT_PX = 9.0
"""The smallest text a figure may show on a laptop's page, in CSS pixels (a phone reader zooms a figure in)."""
MIN_VISIBLE_FIGURE = 0.9
"""The share of a figure's width that must be in view, at every width, without scrolling anything sideways."""


REDIRECT = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)"', re.IGNORECASE)
"""A page that only sends the reader on (the site's root index.html goes to the book's first page)."""
SCRIPT_TIMEOUT_S = 100
"""How long one page check may run: under Selenium's 120 s HTTP read timeout, so that a hung page fails as a script
timeout that names its page, not as a ReadTimeoutError from deep inside urllib3."""


def test_every_page_renders_in_a_real_browser(site, browser):
    from selenium.common.exceptions import TimeoutException

    pages = [p for p in sorted(site.rglob("*.html")) if p.name not in ("genindex.html", "search.html") and "_static" not in p.parts]
    assert any(p.name == "index.html" for p in pages) and len(pages) >= len(CHAPTERS) + 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    browser.set_script_timeout(SCRIPT_TIMEOUT_S)  # a long page on a loaded CI machine can take a minute
    for page in pages:
        name = str(page.relative_to(site))
        if REDIRECT.search(page.read_text()):  # a check injected here races the refresh: its page can vanish mid-script
            problems += redirect_problems(page, name)
            continue
        for size, width in ((DESKTOP, ""), (PHONE, " at phone width")):
            browser.set_window_size(*size)
            browser.get(page.as_uri())
            try:
                found = browser.execute_async_script(PAGE_CHECK)
            except TimeoutException:
                problems.append(f"{name}: the page check did not finish in {SCRIPT_TIMEOUT_S} s{width}")
                continue
            browser.save_screenshot(str(SHOTS / (name.replace("/", "__") + (".phone" if width else "") + ".png")))
            if found.get("scriptError"):
                problems.append(f"{name}: the page check failed{width}: {found['scriptError']}")
                continue
            problems += [f"{p}{width}" for p in page_problems(name, found, browser, phone=bool(width))]
            problems += [f"{p}{width}" for p in menu_problems(name, page.as_uri(), browser, phone=bool(width))]
        browser.set_window_size(*DESKTOP)
        problems += sentence_problems(name, browser.execute_script(BLOCKS_SCRIPT))
        for mode in ("light", "dark"):
            problems += caption_contrast_problems(name, page.as_uri(), browser, mode)
    problems += [f"{p.relative_to(site)}: a downloadable notebook holds a path of the machine that built it"
                 for p in site.rglob("*.ipynb") if MACHINE_PATH.search(p.read_text())]
    assert not problems, "\n".join(problems)


def sentence_problems(name: str, blocks: list[str]) -> list[str]:
    """Every sentence over :data:`~sentences.LIMIT` words in a page's rendered prose (tables, code and math aside)."""
    return [f"{name}: a sentence of {n} words (over {LIMIT}): {sentence[:120]}…" for n, sentence in long_sentences(blocks)]


def test_the_sentence_check_counts_the_rendered_prose(browser, tmp_path):
    """A long sentence is caught, and the same words in a table, a code block or split in two are not."""
    long = " ".join(["word"] * 50)
    page = tmp_path / "long.html"
    page.write_text(f"<main><p>{long}.</p><table><tr><td>{long}.</td></tr></table><pre>{long}.</pre>"
                    f"<p>{' '.join(['word'] * 25)}. {' '.join(['word'] * 25)}.</p></main>")
    browser.get(page.as_uri())
    found = sentence_problems("long.html", browser.execute_script(BLOCKS_SCRIPT))
    assert len(found) == 1 and "a sentence of 50 words" in found[0]


SIDEBAR_STATE = """
const box = (selector) => {
  const el = document.querySelector(selector);
  if (!el) return {present: false, shown: false, links: 0};
  const r = el.getBoundingClientRect(), style = getComputedStyle(el);
  const shown = style.visibility !== 'hidden' && style.display !== 'none' && r.width > 50 && r.right > 10 && r.left < innerWidth - 10;
  const links = [...el.querySelectorAll('a[href]')].filter(a => { const b = a.getBoundingClientRect();
    return b.width > 0 && b.right > 0 && b.left < innerWidth && getComputedStyle(a).visibility !== 'hidden'; }).length;
  return {present: true, shown: shown, links: links};
};
return {primary: box('.bd-sidebar-primary'), secondary: box('.bd-sidebar-secondary')};
"""
"""Whether the book's sidebar (table of contents) and the page's (its sections) are on screen, and how many of their
links a reader can see."""


def menu_problems(name: str, uri: str, browser, phone: bool) -> list[str]:
    """The menus, clicked as a reader would: on a phone the visible ☰ button must bring the book's table of contents on
    screen (with links) and the contents button the page's sections; on a laptop ☰ must fold the shown sidebar away."""
    import time

    def click(kind: str) -> dict | None:
        browser.get(uri)
        buttons = [b for b in browser.find_elements("css selector", f".{kind}-toggle") if b.is_displayed()]
        if not buttons:
            return None
        buttons[0].click()
        time.sleep(0.5)  # the sidebars slide in
        return browser.execute_script(SIDEBAR_STATE)

    problems = []
    if phone:
        opened = click("primary")
        if opened is None:
            problems.append(f"{name}: no menu button (☰) on the page")
        elif not (opened["primary"]["shown"] and opened["primary"]["links"]):
            problems.append(f"{name}: the menu button (☰) does not open the table of contents")
        browser.get(uri)
        if browser.execute_script(SIDEBAR_STATE)["secondary"]["present"]:
            opened = click("secondary")
            if opened is not None and not (opened["secondary"]["shown"] and opened["secondary"]["links"]):
                problems.append(f"{name}: the contents button does not open the page's sections")
    else:
        browser.get(uri)
        if browser.execute_script(SIDEBAR_STATE)["primary"]["shown"]:
            folded = click("primary")
            if folded is not None and folded["primary"]["shown"]:
                problems.append(f"{name}: the menu button (☰) does not fold the sidebar away")
    return problems


CAPTION_CONTRAST = """
const mode = arguments[0];
document.documentElement.dataset.theme = mode; document.documentElement.dataset.mode = mode;
const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
const luminance = ([r, g, b]) => { const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
const background = (el) => { for (let up = el; up; up = up.parentElement) { const c = rgb(getComputedStyle(up).backgroundColor);
  if (c.length === 3 || c[3] > 0.5) return c.slice(0, 3); } return mode === 'dark' ? [0, 0, 0] : [255, 255, 255]; };
return [...document.querySelectorAll('main caption')].map(cap => {
  const [hi, lo] = [luminance(rgb(getComputedStyle(cap).color).slice(0, 3)), luminance(background(cap))].sort((x, y) => y - x);
  return {text: cap.innerText.slice(0, 40), ratio: (hi + 0.05) / (lo + 0.05)}; });
"""
"""Each table caption's contrast ratio (WCAG 2: (L1 + 0.05) / (L2 + 0.05)) against the background it is drawn on,
with the page switched to the theme's light or dark mode (the argument)."""
MIN_CONTRAST = 4.5
"""WCAG 2's level AA for body text."""


def caption_contrast_problems(name: str, uri: str, browser, mode: str) -> list[str]:
    """Table captions whose text is too faint to read against their background, in the given colour mode."""
    browser.get(uri)
    return [f"{name}: a table caption is faint in {mode} mode (contrast {c['ratio']:.1f} < {MIN_CONTRAST}): {c['text']!r}"
            for c in browser.execute_script(CAPTION_CONTRAST, mode) if c["ratio"] < MIN_CONTRAST]


def redirect_problems(page: Path, name: str) -> list[str]:
    """A redirecting page's one check: the page it sends the reader to exists."""
    target = REDIRECT.search(page.read_text()).group(1)
    return [] if (page.parent / target).exists() else [f"{name}: redirects to {target}, which does not exist"]


def page_problems(name: str, found: dict, browser, phone: bool = False) -> list[str]:
    """What is wrong on one rendered page, at the width it was checked at: broken parts, then :func:`reader_problems`."""
    problems = [f"{name}: console error: {e['message']}" for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    for link in found["links"]:
        target = Path(link.split("#")[0].removeprefix("file://"))
        if not target.exists():
            problems.append(f"{name}: broken internal link {link}")
    problems += [f"{name}: image did not render: {i['src']}" for i in found["images"] if not i["ok"]]
    problems += [f"{name}: image alt text is a file path: {i['alt']}" for i in found["images"] if is_image_path(i["alt"])]
    for marker in ("{glue", "Traceback (most recent call last)", "\\(", "\\[", "$$", "Warning:"):
        if marker in found["text"]:
            problems.append(f"{name}: the page shows {marker!r}")
    raw_tex = re.search(r"\\(perp|alpha|tau|mathcal|frac|varepsilon)\b|\$[A-Za-z]_", found["text"])
    if raw_tex:
        problems.append(f"{name}: raw TeX in the text: {found['text'][max(0, raw_tex.start() - 30):raw_tex.end() + 10]!r}")
    if found["errors"]:
        problems.append(f"{name}: {found['errors']} error output(s)")
    if found["boldComputed"]:
        problems.append(f"{name}: {found['boldComputed']} computed sentence(s) set in bold, not in the prose's weight")
    if found["rawCode"]:
        problems.append(f"{name}: {found['rawCode']} span(s) of text between backticks left unrendered")
    if found["searchBoxes"] > 1:
        problems.append(f"{name}: {found['searchBoxes']} search boxes on the page")
    if not found["typeset"]:
        problems.append(f"{name}: MathJax did not finish typesetting within 20 s")
    if found["rawMath"]:
        problems.append(f"{name}: {found['rawMath']} math element(s) left as raw TeX")
    if name.startswith("notebooks/") and not found["images"] and not any(page in name for page in ("reproducibility", "scorecard")):
        problems.append(f"{name}: no figure rendered")
    return problems + reader_problems(name, found, phone)


DESKTOP, PHONE = (1366, 900), (390, 844)
"""A laptop's window and a phone's, the sizes a reader's look was taken at."""


def reader_problems(name: str, found: dict, phone: bool = False) -> list[str]:
    """What a reader would see wrong on a page that renders: the checks of issue "The pages a reader sees"."""
    from attncoda.face.plots import SMALLEST_FONT_PX

    problems = []
    text = found["text"]
    checks = [(PROGRESS, "a progress bar or log line"), (MACHINE_PATH, "a path of the machine that built it"),
              (UNDEFINED, "an undefined number shown as nan")]
    if name.endswith("api.html"):  # the reference documents when a function returns NaN: the word is prose there, not a number
        checks.pop()
    for pattern, what in checks:
        hit = pattern.search(text)
        if hit:
            problems.append(f"{name}: {what}: {text[max(0, hit.start() - 40):hit.end() + 20]!r}")
    for tex in TEX_OUTSIDE_MATH.finditer(found["proseText"]):
        problems.append(f"{name}: notation outside math mode: {found['proseText'][max(0, tex.start() - 30):tex.end() + 10]!r}")
    problems += [f"{name}: numbers in adjacent cells run together: {c}" for c in found["fusedCells"]]
    problems += [f"{name}: clipped, with no scroll box: {w}" for w in found["unscrolledWide"]]
    problems += [f"{name}: a table caption runs out of view: {c}" for c in found["clippedCaptions"]]
    problems += [f"{name}: the page scrolls sideways: {w}" for w in found["pageOverflow"]]
    problems += [f"{name}: empty section under the heading {h!r}" for h in found["emptyHeadings"]]
    problems += [f"{name}: a number broken across lines: {n}" for n in found["brokenNumbers"]]
    problems += [f"{name}: a \"Show code cell source\" bar over a cell that shows nothing: {c!r}" for c in found["emptySourceBars"]]
    for image in found["smallImages"]:
        smallest = image["ratio"] * SMALLEST_FONT_PX
        if image["visible"] < MIN_VISIBLE_FIGURE:
            problems.append(f"{name}: figure {image['src']} shows {100 * image['visible']:.0f} % of its width; the rest is out of view")
        if not phone and image["ratio"] < 0.6 and smallest < MIN_FONT_PX:  # a phone reader zooms in; a laptop reader should not need to
            problems.append(f"{name}: figure {image['src']} is shown at {100 * image['ratio']:.0f} % of its size: its smallest text is {smallest:.1f} px")
    return problems


DEFECTS = """<!doctype html><html><head><meta charset="utf-8"><style>td { padding: 0; }</style></head><body><main>
<section><h2>Results</h2>
<pre>Converting and de-quantizing GGUF tensors...:  50%|#####     | 1/2 [00:01<00:01,  1.00it/s]</pre>
<p>Written to /tmp/build/results and PosixPath('/root/cache').</p>
<p>The content part d_A^⊥ is invariant.</p>
<table><tr><td>1.25</td><td>3.50</td><td>nan</td></tr></table>
<table style="width: 3000px"><tr><td>a table wider than any column</td></tr></table>
<div style="overflow-x: auto"><table style="width: 3000px"><caption>A caption as wide as its table, most of it out of view</caption><tr><td>wide</td></tr></table></div>
<div class="cell_output"><img src="wide.png" style="width: 500px"></div>
<figure style="overflow-x: auto; width: 300px"><img src="wide.png" style="width: 600px"></figure>
<p>A path that does not wrap: <code style="white-space: nowrap">_build/runs/pruning/a-run-folder-whose-name-is-longer-than-a-laptop-window-is-wide-since-it-holds-the-hash-of-every-parameter-0123456789abcdef0123456789abcdef0123456789abcdef/results/pruning/model.json</code></p>
</section>
<div class="cell"><details class="above-input"><summary>Show code cell source</summary><div class="cell_input"><pre>glue("rate", 0.5)</pre></div></details></div>
<table><thead><tr><th style="width: 2ch; max-width: 2ch; overflow-wrap: anywhere">share 1e-6</th></tr></thead><tr><td>0.5</td></tr></table>
<section><h2>Figure 4: an empty section</h2></section>
</main></body></html>"""


def test_the_checks_catch_each_defect(browser, tmp_path):
    """Each defect a reader found, put back on a page of its own: the site check reports every one."""
    from PIL import Image

    Image.new("RGB", (2000, 200), "white").save(tmp_path / "wide.png")
    page = tmp_path / "defects.html"
    page.write_text(DEFECTS)
    browser.set_window_size(*DESKTOP)
    browser.get(page.as_uri())
    problems = "\n".join(reader_problems("defects.html", browser.execute_async_script(PAGE_CHECK)))
    for expected in ("a progress bar", "a path of the machine", "nan", "notation outside math mode", "run together: 1.25 | 3.50",
                     "clipped, with no scroll box: table", "a table caption runs out of view", "figure wide.png is shown at 25 %", "figure wide.png shows 50 % of its width", "the page scrolls sideways: code", "empty section under the heading 'Figure 4",
                     "a number broken across lines: 1e-6",
                     'a "Show code cell source" bar over a cell that shows nothing: \'glue("rate", 0.5)\''):
        assert expected in problems, f"the check missed: {expected}\n{problems}"


def test_the_api_reference_documents_the_public_functions(site):
    """The reference page is generated from the docstrings: every public math function and the patterns route, each
    with its Parameters and Returns."""
    import attncoda

    page = (site / "book" / "api.html").read_text()
    functions = [n for n in attncoda.__all__ if callable(getattr(attncoda, n)) and not isinstance(getattr(attncoda, n), type)]
    missing = [n for n in functions if f'id="attncoda.{n}"' not in page]
    assert not missing, f"not on the API page: {missing}"
    for name in ("attncoda.engine.patterns.signatures_from_patterns", "attncoda.studies.measurement.measure_signatures", "attncoda.studies.audit.audit"):
        assert f'id="{name}"' in page
    assert page.count(">Parameters<") >= len(functions) and page.count(">Returns<") >= len(functions)


DEAD_MENU = """<!doctype html><html><head><meta charset="utf-8"><style>
.bd-sidebar-primary { position: fixed; left: -300px; top: 0; width: 280px; height: 100%; }
.bd-sidebar-secondary { position: fixed; left: 400px; top: 0; width: 280px; height: 100%; }
</style></head><body>
<button class="primary-toggle" style="display: none">☰</button><button class="primary-toggle">☰</button>
<button class="secondary-toggle">contents</button>
<div class="bd-sidebar-primary"><a href="#one">1. The theory witness</a></div>
<div class="bd-sidebar-secondary"><a href="#rows">Three rows</a></div>
<script>document.querySelector('.primary-toggle').addEventListener('click', () => {
  document.querySelector('.bd-sidebar-primary').style.left = '0'; });</script>
<main><p>A page whose menu script bound itself to the hidden button (pydata-sphinx-theme 0.17).</p></main></body></html>"""


def test_the_menu_check_catches_a_dead_menu(browser, tmp_path):
    """The phone menu of pydata-sphinx-theme 0.17 under sphinx-book-theme 1.3, put back: its script listens on a hidden
    second ☰, so the visible one opens nothing. The menu check reports it, and the same page with the script bound to
    the visible button passes."""
    page = tmp_path / "dead-menu.html"
    page.write_text(DEAD_MENU)
    browser.set_window_size(*PHONE)
    problems = menu_problems("dead-menu.html", page.as_uri(), browser, phone=True)
    assert "dead-menu.html: the menu button (☰) does not open the table of contents" in problems
    assert "dead-menu.html: the contents button does not open the page's sections" in problems
    page.write_text(DEAD_MENU.replace("querySelector('.primary-toggle')", "querySelectorAll('.primary-toggle')[1]")
                    .replace("A page whose", "<script>document.querySelector('.secondary-toggle').addEventListener('click', () => {"
                             " document.querySelector('.bd-sidebar-secondary').style.left = '100px'; });</script>A page whose"))
    assert menu_problems("dead-menu.html", page.as_uri(), browser, phone=True) == []


def test_the_contrast_check_catches_a_faint_caption(browser, tmp_path):
    """Dark mode's grey caption on the light box of an HTML output, put back: the check reports it; in the table's
    own colour it passes."""
    page = tmp_path / "faint.html"
    faint = ('<main><div style="background: rgb(206, 214, 221); color: #111"><table><caption style="color: rgb(156, 164, 175)">'
             'Reversal rate (%)</caption><tr><td>2.0</td></tr></table></div></main>')
    page.write_text(faint)
    browser.set_window_size(*DESKTOP)
    assert caption_contrast_problems("faint.html", page.as_uri(), browser, "dark") == [
        "faint.html: a table caption is faint in dark mode (contrast 1.7 < 4.5): 'Reversal rate (%)'"]
    page.write_text(faint.replace('style="color: rgb(156, 164, 175)"', 'style="color: inherit"'))
    assert caption_contrast_problems("faint.html", page.as_uri(), browser, "dark") == []


def test_a_redirect_is_checked_for_its_target(tmp_path):
    """The root index.html only redirects; a check of its target replaces the page check, and a missing target fails."""
    (tmp_path / "book").mkdir()
    page = tmp_path / "index.html"
    page.write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />')
    assert redirect_problems(page, "index.html") == ["index.html: redirects to book/intro.html, which does not exist"]
    (tmp_path / "book" / "intro.html").write_text("<p>the first page</p>")
    assert redirect_problems(page, "index.html") == []
