"""The reproducibility page's tables and sentences: what produced each committed result, the package versions, and
how far another machine's rerun moved the numbers."""

from __future__ import annotations

import json
from importlib import metadata

from .report import plural

PACKAGES = ("attncoda", "numpy", "scipy", "matplotlib", "torch", "transformers", "papermill", "jupyter-book", "myst-nb")


def record_rows(results_dir=None) -> list[dict]:
    """One row per results file of the record: chapter, model, the commit and package source that made it, whether the
    tree was clean and whether the modules that made it are unchanged in this code, the weights, seeds and wall time."""
    from ..base.paths import results_dir as resolve_results_dir
    from ..base.provenance import is_current
    from .results import read_timings

    rows = []
    for path in sorted(resolve_results_dir(results_dir).glob("*/*.json")):
        record = json.loads(path.read_text())
        prov, numbers = record["provenance"], record["results"]
        code = prov["code"]
        info = numbers.get("model_info", {}) if isinstance(numbers, dict) else {}
        if info:
            weights = info.get("source", "") + (f" (sha256 {numbers['weights_sha256'][:12]})" if numbers.get("weights_sha256") else "")
        else:
            weights = "none (synthetic)" if record["name"] == "synthetic" else "not recorded"
        rows.append({"chapter": record["chapter"], "model": record["name"], "commit": (code.get("git_commit") or "")[:10],
                     "source hash": code.get("source_sha256", "")[:12], "clean tree": code.get("clean"),
                     "this code": is_current(code), "weights": weights, "seeds": prov["seed"],
                     "wall time (s)": read_timings(record["chapter"], record["name"], results_dir).get("provenance", {}).get("wall_time_s")})
    return rows


def package_versions(packages=PACKAGES) -> list[dict]:
    """The installed version of each package (or "not installed")."""
    out = []
    for name in packages:
        try:
            out.append({"package": name, "version": metadata.version(name)})
        except metadata.PackageNotFoundError:
            out.append({"package": name, "version": "not installed"})
    return out


def cross_machine_sentence(path, current: str) -> str:
    """What ``attncoda verify``'s committed report (``path``) says: how many numbers differ, the largest relative
    difference against its tolerance, and the round-off diagnostics."""
    if not path.exists():
        return "It has not been measured for this build (the command above writes it)."
    rec = json.loads(path.read_text())
    reports = rec["reports"]
    compared, differing, counts = (sum(r[k] for r in reports) for k in ("compared", "differing", "differing_counts"))
    moved = max(r["largest_count_change"] for r in reports)
    worst = max((r for r in reports if r["largest_relative"]), key=lambda r: r["largest_relative"]["difference"])
    w = worst["largest_relative"]
    roundoff = max((r["largest_roundoff"]["difference"] for r in reports if r["largest_roundoff"]), default=0.0)
    at = "this page's package code" if rec["code"].get("source_sha256") == current else f"commit {rec['code'].get('git_commit', '?')[:10]} (earlier package code)"
    return (f"Measured at {at}: of {compared:,} numbers in {len(reports)} results files, {differing:,} differ in their last digits; "
            + (f"{plural(counts, 'verdict count')} moved, by at most {plural(int(moved), 'triple')} (a triple crossed a near-tie). " if counts else "no verdict count moved. ")
            + f"The largest relative difference is {w['difference']:.1e} ({worst['file']}, {w['path']}), "
            + ("within" if w["difference"] <= worst["tolerance"] else "above") + f" the tolerance of {worst['tolerance']:g}. "
            + f"The round-off diagnostics (Lemma 1's residual, the float32 path's log difference from the float64 one) moved by at most {roundoff:.1e}, "
            "reported rather than judged: another machine's rounding changes them by definition. "
            + ("Every file passes." if all(r["ok"] for r in reports) else
               "Not every file passes: " + "; ".join(f"{r['file']} ({r['largest_relative']['path']}: {r['largest_relative']['committed']:.4g} committed, "
                                                      f"{r['largest_relative']['ours']:.4g} here)" for r in reports if not r["ok"]) + "."))


def cross_cpu_rows(path) -> list[dict]:
    """One row per chapter of the committed two-CPU comparison (:mod:`attncoda.face.cross_machine`): how many numbers
    moved, their median and largest relative change (with the comparison's floor), and how many readings in words moved."""
    if not path.exists():
        return []
    rec = json.loads(path.read_text())
    change = lambda x: f"{x:.1e}" if x else "0"
    return [{"chapter": chapter, "numbers": f"{c['numbers']['compared']:,}", "differ": f"{c['numbers']['differing']:,}",
             "median relative change": change(c["numbers"].get("median_relative", 0.0)),
             "largest relative change": change(c["numbers"]["largest_relative"]),
             "where": c["numbers"]["where"] or "—",
             "readings moved": f"{len(c['readings']['moved'])} of {c['readings']['compared']}"}
            for chapter, c in rec["chapters"].items()]


def cross_cpu_markdown(path) -> str:
    """:func:`cross_cpu_rows` as a Markdown table, each ``where`` (a place in a results file, whose keys can read like
    notation: ``synthetic/table4/d_A/…``) set as code; a line saying so when no comparison is committed."""
    rows = cross_cpu_rows(path)
    if not rows:
        return "No two-CPU comparison is committed."
    columns = list(rows[0])
    cell = lambda k, v: f"`{v}`" if k == "where" and v != "—" else str(v)
    return "\n".join(["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns),
                      *("| " + " | ".join(cell(k, v) for k, v in row.items()) + " |" for row in rows)])


def cross_cpu_sentence(path) -> str:
    """What the two-CPU comparison says, in short sentences: which records, how many scorecard verdicts moved, every
    chapter whose numbers moved with its median and largest relative change, and which chapters moved a reading."""
    if not path.exists():
        return "No two-CPU comparison is committed (python -m attncoda.face.cross_machine BEFORE AFTER NOTE --record writes one)."
    rec = json.loads(path.read_text())
    moved_verdicts = [k for k, v in rec["verdicts"].items() if v["before"] != v["after"]]
    moved = {ch: len(c["readings"]["moved"]) for ch, c in rec["chapters"].items() if c["readings"]["moved"]}
    exact = [ch for ch, c in rec["chapters"].items() if c["numbers"]["differing"] == 0]
    changed = {ch: c["numbers"] for ch, c in rec["chapters"].items() if c["numbers"]["differing"]}
    text = f"Compared: {rec['note']}. " if rec.get("note") else f"Compared: the records of {rec['before']} and {rec['after']}. "
    text += (f"All {len(rec['verdicts'])} scorecard verdicts are the same on both. " if not moved_verdicts
             else f"{len(moved_verdicts)} of {len(rec['verdicts'])} scorecard verdicts moved: {', '.join(moved_verdicts)}. ")
    text += (f"Every number of {' and '.join(exact)} is identical. " if exact else "")
    if changed:
        text += (f"Numbers moved in {len(changed)} chapters: {', '.join(changed)}. The table gives each one's median and largest "
                 f"relative change, |x − y| / max(|x|, |y|, {rec.get('floor', 0.01):g}). ")
    text += ("No reading in words moved in any chapter." if not moved else
             "Readings in words moved only in " + ", ".join(f"{ch} ({n})" for ch, n in moved.items()) + ".")
    return text
