"""PNG figures of a benchmark run (matplotlib with the Agg backend; imported only when plotting), with a
Hangul font registered from its file for the Korean labels (:mod:`kometrics.korbertscore.fonts`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .benchmark import BenchmarkResult

__all__ = ["plot_layers", "plot_scatter", "layer_ticks"]


@contextlib.contextmanager
def _pyplot() -> Iterator:
    """pyplot on the Agg backend, drawing with the Hangul font inside the block."""
    import matplotlib

    from kometrics.korbertscore.fonts import hangul_rc

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    with matplotlib.rc_context(hangul_rc()):
        yield plt


def layer_ticks(ax, layers: list[int]) -> None:
    """Whole-number ticks on a layer axis: every layer when there are at most 24, else a readable integer
    subset (never 2.5)."""
    from matplotlib.ticker import MaxNLocator

    layers = sorted({int(x) for x in layers})
    if 0 < len(layers) <= 24:
        ax.set_xticks(layers)
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def plot_layers(result: BenchmarkResult, path: str | os.PathLike) -> Path:
    """Pearson of BERT P, R and F1 against the human score per layer (Table 3), F1 with its 95% band;
    solid = idf off, dashed = idf on. The n-gram metrics are drawn as horizontal reference lines."""
    with _pyplot() as plt:
        fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
        colors = {"P": "tab:blue", "R": "tab:orange", "F1": "tab:green"}
        for flag in sorted({r["idf"] for r in result.table3}):
            rows = [r for r in result.table3 if r["idf"] == flag]
            layers = [r["layer"] for r in rows]
            style = "--" if flag else "-"
            for key, color in colors.items():
                ax.plot(layers, [r[f"{key}_pearson"] for r in rows], style, marker="o", ms=3, color=color,
                        label=f"BERT-{key}{' (idf)' if flag else ''}")
            lo = [r["F1_pearson_ci"][0] for r in rows]
            hi = [r["F1_pearson_ci"][1] for r in rows]
            ax.fill_between(layers, lo, hi, color=colors["F1"], alpha=0.12 if not flag else 0.06)
        for r in result.table2:
            if r["layer"] is None and r["metric"] != "TER":
                ax.axhline(r["pearson"], color="grey", lw=0.8, ls=":")
                ax.text(ax.get_xlim()[0], r["pearson"], f" {r['metric']}", fontsize=7, va="bottom", color="grey")
        layer_ticks(ax, [r["layer"] for r in result.table3])
        ax.set_xlabel("layer (0 = embeddings)")
        ax.set_ylabel("Pearson r with human score")
        ax.set_title(f"Correlation per layer: {result.model_label}\n{result.corpus.get('name')}, "
                     f"{len(result.ids)} pairs", fontsize=9)
        ax.legend(fontsize=7, ncol=2)
        ax.grid(alpha=0.3)
        return _save(plt, fig, path)


def plot_scatter(result: BenchmarkResult, path: str | os.PathLike) -> Path:
    """Scatter of the best metric of Table 2 (largest |Pearson|) against the human score, with a
    least-squares line."""
    with _pyplot() as plt:
        best = result.best_metric()
        x = result.columns[best["column"]]
        y = result.human
        fig, ax = plt.subplots(figsize=(5, 4.2), dpi=120)
        ax.scatter(x, y, s=8, alpha=0.5)
        if np.ptp(x) > 0:
            slope, intercept = np.polyfit(x, y, 1)
            xs = np.linspace(x.min(), x.max(), 2)
            ax.plot(xs, slope * xs + intercept, color="tab:red", lw=1)
        lo, hi = best["pearson_ci"]
        ax.set_xlabel(best["metric"] + (f" (layer {best['layer']})" if best["layer"] is not None else ""))
        ax.set_ylabel("human score (mean rater z)" if result.corpus.get("human_score", {}).get("method") == "z_mean"
                      else "human score")
        ax.set_title(f"{best['metric']}: Pearson {best['pearson']:+.3f} [{lo:+.3f}, {hi:+.3f}], "
                     f"n={len(y)}\n{result.model_label}", fontsize=8)
        ax.grid(alpha=0.3)
        return _save(plt, fig, path)


def _save(plt, fig, path: str | os.PathLike) -> Path:
    """Lay out, write and close a figure; return its path."""
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out
