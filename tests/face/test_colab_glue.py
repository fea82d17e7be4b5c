"""In Colab, a glued sentence, table or figure is shown as its cell's output (face/report.glue); a bare value is not."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from IPython.display import Markdown  # noqa: E402

from attncoda.face import report  # noqa: E402


def _shown(monkeypatch, colab: bool) -> list:
    import IPython.display

    shown = []
    real = IPython.display.display

    def display(*values, **options):  # myst-nb's hidden store passes raw=True; a shown output passes the value alone
        if options:
            return real(*values, **options)
        shown.extend(values)

    monkeypatch.setattr(IPython.display, "display", display)
    if colab:
        monkeypatch.setenv("ATTNCODA_COLAB", "1")
    else:
        monkeypatch.delenv("ATTNCODA_COLAB", raising=False)
    fig = plt.figure()
    sentence = Markdown("Of 21 claims about models: 3 reproduced.")
    for name, value in (("answer", sentence), ("n_models", 5), ("model_list", "a, b"), ("figure", fig)):
        report.glue(name, value)
    plt.close(fig)
    return shown


def test_colab_shows_each_sentence_and_figure_and_no_bare_value(monkeypatch):
    shown = _shown(monkeypatch, colab=True)
    assert len(shown) == 2 and isinstance(shown[0], Markdown) and hasattr(shown[1], "savefig")


def test_outside_colab_a_glue_shows_nothing(monkeypatch):
    assert _shown(monkeypatch, colab=False) == []
