"""The rendered site, opened page by page in a real browser (Debian's headless Chromium through Selenium).

The book is built from every chapter run on the small profile (per-model chapters on a tiny model saved
by the test) into a temporary folder, with the same code path as `make book`. Each page fails the test on:
a JavaScript error in the console, a broken internal link or image, a raw glue placeholder, an error or
traceback output, math left as raw TeX, or a figure that did not render. A screenshot of each page is kept.
"""

import re
import shutil
from pathlib import Path

import pytest

from attncoda.face.chapters import CHAPTERS, run_chapter

SHOTS = Path(__file__).parents[1] / "_build" / "screenshots"


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
            run_chapter(chapter.key, model=model, profile="small", parameters={"results_dir": str(root / "results")},
                        output=stage / "notebooks" / f"{chapter.notebook}.ipynb", progress=False)
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
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1300,2000", "--allow-file-access-from-files"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    yield driver
    driver.quit()


PAGE_CHECK = """
const done = arguments[arguments.length - 1];
const typeset = (window.MathJax && MathJax.startup && MathJax.startup.promise) ? MathJax.startup.promise : Promise.resolve();
const ready = Promise.race([typeset.then(() => true), new Promise(r => setTimeout(() => r(false), 20000))]);
ready.then((typesetDone) => {
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
  });
});
"""


def test_every_page_renders_in_a_real_browser(site, browser):
    pages = [p for p in sorted(site.rglob("*.html")) if p.name not in ("genindex.html", "search.html") and "_static" not in p.parts]
    assert any(p.name == "index.html" for p in pages) and len(pages) >= len(CHAPTERS) + 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    browser.set_script_timeout(60)
    for page in pages:
        browser.get(page.as_uri())
        found = browser.execute_async_script(PAGE_CHECK)
        name = str(page.relative_to(site))
        browser.save_screenshot(str(SHOTS / (name.replace("/", "__") + ".png")))
        console = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        problems += [f"{name}: console error: {m}" for m in console]
        for link in found["links"]:
            target = Path(link.split("#")[0].removeprefix("file://"))
            if not target.exists():
                problems.append(f"{name}: broken internal link {link}")
        problems += [f"{name}: image did not render: {i['src']}" for i in found["images"] if not i["ok"]]
        problems += [f"{name}: image alt text is a file path: {i['alt']}" for i in found["images"] if "/" in i["alt"] or i["alt"].endswith(".png")]
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
        if name.startswith("notebooks/") and not found["images"] and "reproducibility" not in name:
            problems.append(f"{name}: no figure rendered")
    assert not problems, "\n".join(problems)
