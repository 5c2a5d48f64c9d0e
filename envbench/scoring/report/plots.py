"""The report's two plots as PNG bytes (matplotlib, Agg backend, no version stamp: same data, same bytes)."""

from __future__ import annotations

import io
from collections.abc import Mapping
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
    """Original and Env F1 per entity type (types with both defined), the change annotated."""
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
        ax.set_xticks(list(xs), types)
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
