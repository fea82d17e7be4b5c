"""The theory chapter's tables, from :mod:`attncoda.studies.theory` and the invariance checks (no computation decides
here). Functions return table rows (lists of dicts) or ``{name: value}`` dicts for the page's glue."""

from __future__ import annotations

from ..math.metrics import DOMINANCE
from ..studies.reversal import CLASSICAL
from ..studies.theory import CONVENTIONS, TABLE1_METRICS, reverses
from .report import mark

TABLE4_COLUMNS = {"perm": "Perm.", "perturb": "Perturb. (⊕)", "temp": "Temp.", "sink": "Sink", "dom": "Dom."}


def table1_rows(table: dict) -> list[dict]:
    """Ours: each metric's two distances and closer row under each convention, and whether the verdict reverses."""
    rows = []
    for name, label in TABLE1_METRICS.items():
        row = {"metric": label}
        for conv, prime in CONVENTIONS.items():
            v = table[(name, conv)]
            row[f"d(p{prime},q{prime})"], row[f"d(p{prime},r{prime})"], row[f"closer ({conv})"] = v.d_q, v.d_r, v.closer
        row["verdict"] = "reversal" if reverses(table, name) else "stable"
        rows.append(row)
    return rows


def paper_table1_rows(paper_table1: dict, agree: dict[str, bool]) -> list[dict]:
    """The paper's Table 1 numbers, and whether its verdicts are ours."""
    return [{"metric": TABLE1_METRICS[name], "paper d(p,q)": ref["keep"][0], "paper d(p,r)": ref["keep"][1], "paper d(p',q')": ref["drop"][0],
             "paper d(p',r')": ref["drop"][1], "verdicts agree with ours": mark(agree[name])} for name, ref in paper_table1.items() if name in agree]


def table1_values(table: dict) -> dict:
    """The numbers the page's prose quotes from Table 1."""
    return {"t1_n_reversals": sum(reverses(table, m) for m in CLASSICAL),
            "t1_cos_keep_q": table[("cosine", "keep")].d_q, "t1_cos_keep_r": table[("cosine", "keep")].d_r,
            "t1_cos_drop_q": table[("cosine", "drop")].d_q, "t1_cos_drop_r": table[("cosine", "drop")].d_r,
            "t1_dA_keep_q": table[("aitchison", "keep")].d_q, "t1_dA_keep_r": table[("aitchison", "keep")].d_r,
            "t1_content_r": table[("content", "keep")].d_r}


def dominance_rows(table: dict) -> list[dict]:
    """Subcompositional dominance on the witness, ``d(p', r') ≤ d(p, r)``: whether dropping the sink can only bring p
    and r closer (it holds for the Aitchison distance, not for JS or Euclidean)."""
    rows = []
    for name in DOMINANCE:
        keep, drop = table[(name, "keep")].d_r, table[(name, "drop")].d_r
        rows.append({"metric": TABLE1_METRICS[name], "d(p,r)": keep, "d(p',r')": drop, "dominance holds": mark(drop <= keep + 1e-12)})
    return rows


def dominance_values(table: dict) -> dict:
    """The page's numbers for JS on the witness's p and r, with the sink and without, and their ratio."""
    keep, drop = table[("js", "keep")].d_r, table[("js", "drop")].d_r
    return {"dom_js_keep": keep, "dom_js_drop": drop, "dom_js_ratio": drop / keep}


def table4_rows(checks: dict) -> list[dict]:
    """Ours: ✓ or ✗ per subject and property, with the worst deviation seen."""
    return [{"subject": s, **{TABLE4_COLUMNS[k]: f"{mark(c.holds)} ({c.worst:.1e})" if c.holds is not None else "n/a" for k, c in row.items()}}
            for s, row in checks.items()]


def paper_table4_rows(paper_table4: dict) -> list[dict]:
    return [{"subject": s, **{TABLE4_COLUMNS[k]: mark(v) for k, v in row.items()}} for s, row in paper_table4.items() if s != "note"]


def panel_spec_values(specs: dict) -> dict:
    """The page's numbers for Figure 2's two synthetic stacks."""
    out = {}
    for key, spec in zip("ab", specs.values()):
        out.update({f"spec{key}_s_first": spec["sink_masses"][0], f"spec{key}_s_last": spec["sink_masses"][-1],
                    f"spec{key}_c_first": spec["concentrations"][0], f"spec{key}_c_last": spec["concentrations"][-1],
                    f"spec{key}_n": spec["n_content"], f"spec{key}_focus": spec["focus"]})
    b = list(specs.values())[1]
    out.update({"spec_layers": len(b["sink_masses"]), "spec_noise": b["noise_sd"]})
    return out


def panel_values(panels, paper_figure2: dict) -> dict:
    """The page's numbers for Figure 2: first and last layer of each statistic, ours and the paper's, and the entropy's
    drop, peak and the concentration's growth."""
    out = {"f2_layers": len(next(iter(panels.panels.values()))["entropy"]), "identity_residual": panels.identity_residual}
    for key, summary in zip("ab", panels.panels.values()):
        for stat in ("sink_mass", "entropy", "concentration"):
            out.update({f"f2{key}_{stat}_first": float(summary[stat][0]), f"f2{key}_{stat}_last": float(summary[stat][-1]),
                        f"f2{key}_{stat}_paper_first": paper_figure2[key][stat][0], f"f2{key}_{stat}_paper_last": paper_figure2[key][stat][1]})
        out.update({f"f2{key}_entropy_drop_pct": 100 * (1 - summary["entropy"][-1] / summary["entropy"][0]),
                    f"f2{key}_entropy_peak": float(summary["entropy"].max()), f"f2{key}_entropy_peak_layer": int(summary["entropy"].argmax()) + 1,
                    f"f2{key}_conc_ratio": float(summary["concentration"][-1] / summary["concentration"][0])})
    return out
