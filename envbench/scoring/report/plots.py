"""The report's two plots as PNG bytes (matplotlib, Agg backend, no version stamp: same data, same bytes)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

PLOT_FILES = ("f1_by_entities.png", "type_drop.png")
_META = {"Software": None}  # matplotlib stamps its version otherwise


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata=dict(_META))
    return buf.getvalue()


def f1_by_entities_png(figure4: Mapping[str, Any]) -> bytes:
    """Figure 4: original and Env F1 per bucket of entities per document."""
    plt = _pyplot()
    buckets = figure4["buckets"]
    labels = [b["bucket"] for b in buckets]
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    try:
        for key, name, style in (("original_f1", "original", "o-"), ("env_f1", "Env", "s--")):
            ys = [100 * b[key] if b[key] is not None else float("nan") for b in buckets]
            ax.plot(labels, ys, style, label=name)
        ax.set_xlabel("entities per document")
        ax.set_ylabel("F1 (%)")
        ax.set_title("F1 by number of entities")
        ax.legend()
        fig.tight_layout()
        return _png(fig)
    finally:
        plt.close(fig)


def type_drop_png(per_type: Mapping[str, Any]) -> bytes:
    """Original and Env F1 per entity type (types with both defined), the change annotated, each type's gold
    facts (on the original; each renamed copy has as many) under its name."""
    plt = _pyplot()
    types = [t for t, row in per_type.items() if row["original_f1"] is not None and row["env_f1"] is not None]
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    try:
        xs = range(len(types))
        o = [100 * (per_type[t]["original_f1"] or 0.0) for t in types]
        e = [100 * (per_type[t]["env_f1"] or 0.0) for t in types]
        ax.bar([x - 0.2 for x in xs], o, width=0.4, label="original")
        ax.bar([x + 0.2 for x in xs], e, width=0.4, label="Env")
        for x, a, b in zip(xs, o, e):
            ax.annotate(f"{b - a:+.1f}", (x + 0.2, b), ha="center", va="bottom", fontsize=8)
        # the fact count under each type: a bar of 5 gold facts is no collapse, whatever its height
        ax.set_xticks(list(xs), [f"{t}\nn={per_type[t]['n_gold_original']:,}" for t in types], fontsize=8)
        ax.set_xlabel("type (n: gold facts on the original)")
        ax.set_ylabel("F1 (%)")
        ax.set_title("F1 by entity type (head or tail), original vs Env")
        ax.set_ylim(0, 110)
        ax.legend(loc="upper right", ncols=2)
        fig.tight_layout()
        return _png(fig)
    finally:
        plt.close(fig)


def plots(figure4: Mapping[str, Any], per_type: Mapping[str, Any]) -> dict[str, bytes]:
    """File name -> PNG bytes, in :data:`PLOT_FILES` order."""
    return {PLOT_FILES[0]: f1_by_entities_png(figure4), PLOT_FILES[1]: type_drop_png(per_type)}


def rate_curve_png(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """The robustness report's plot (``robustness.py``'s rows): left, F1 against the share renamed per system
    (rate 0 is the original; rename folders without a popularity bin), with the 95% intervals of the Env F1;
    right, F1 under every other attack per system, the negative control hatched."""
    plt = _pyplot()
    systems = list(dict.fromkeys(r["system"] for r in rows))
    others = list(dict.fromkeys(r["label"] for r in rows
                                if r["env"] is not None and not (r["attack"] == "rename" and r["popularity"] is None)))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5), dpi=100,
                                      gridspec_kw={"width_ratios": [3, 2] if others else [1, 0.01]})
    try:
        for s in systems:
            curve = sorted((r for r in rows if r["system"] == s and r["popularity"] is None
                            and r["attack"] in ("original", "rename")), key=lambda r: r["rate"])
            xs = [r["rate"] for r in curve]
            ys = [100 * r["scores"]["f1"] for r in curve]
            lo = [0.0 if r["falls"] is None else y - 100 * r["falls"]["f1"]["env_low"] for r, y in zip(curve, ys)]
            hi = [0.0 if r["falls"] is None else 100 * r["falls"]["f1"]["env_high"] - y for r, y in zip(curve, ys)]
            left.errorbar(xs, ys, yerr=[lo, hi], fmt="o-", capsize=3, label=s)
        left.set_xlabel("share of renamable entities renamed (--rate; 0 = original)")
        left.set_ylabel("F1 (%)")
        left.set_title("F1 against renaming rate")
        left.set_xlim(-0.05, 1.05)
        left.legend()
        if others:
            width = 0.8 / max(1, len(systems))
            for i, s in enumerate(systems):
                for j, label in enumerate(others):
                    row = next((r for r in rows if r["system"] == s and r["label"] == label), None)
                    if row is None:
                        continue
                    y = 100 * row["scores"]["f1"]
                    err = [[y - 100 * row["falls"]["f1"]["env_low"]], [100 * row["falls"]["f1"]["env_high"] - y]]
                    right.bar(j + (i - (len(systems) - 1) / 2) * width, y, width=width, yerr=err, capsize=3,
                              color=f"C{i}", hatch="//" if row["negative_control"] else None,
                              label=s if j == 0 else None)
            right.set_xticks(range(len(others)), [lb.replace(" (", "\n(") for lb in others], fontsize=7,
                             rotation=30, ha="right")
            right.set_ylabel("F1 (%)")
            right.set_title("F1 under the other attacks\n(hatched: negative control)", fontsize=10)
            right.legend(fontsize=8)
        else:
            right.set_axis_off()
        fig.tight_layout()
        return _png(fig)
    finally:
        plt.close(fig)
