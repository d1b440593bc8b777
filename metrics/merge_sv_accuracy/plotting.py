"""The SV curve: seed-variant accuracy against the correctness threshold CT, with the seed accuracy and MC.

Only matplotlib is needed (imported here, not by the metric module); the figure is built with
``matplotlib.figure.Figure`` so no GUI backend or pyplot state is involved. Korean labels (titles, word
classes) are drawn with a Hangul font registered from its file (:mod:`.fonts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .fonts import hangul_rc

__all__ = ["plot_sv_curve"]


def _curve(values: Mapping[Any, Any]) -> tuple[list[float], list[float]]:
    pairs = sorted((float(k), float(v)) for k, v in values.items() if v is not None)
    return [p[0] for p in pairs], [p[1] for p in pairs]


def plot_sv_curve(result: Mapping[str, Any], title: str | None = None, by_word_class: bool = True):
    """Plot a ``merge_sv_accuracy`` result and return a ``matplotlib.figure.Figure``.

    Draws SV accuracy (y, 0-1) against CT (x, 0-1) as a step line (SV at CT holds on (previous CT, CT]); the seed accuracy (of
    the seeds in the curve) as a dashed horizontal line; MC as a dotted vertical line with a label; and,
    when ``by_word_class`` and the result has them, the per-word-class curves as thin lines. JSON-loaded
    results (string CT keys) work too.
    """
    import matplotlib

    if "sv_accuracy" not in result or not result["sv_accuracy"]:
        raise ValueError("result has no 'sv_accuracy' curve: pass the dict returned by merge_sv_accuracy")
    with matplotlib.rc_context(hangul_rc()):  # the texts keep the font after the context: re-drawing is fine
        return _sv_figure(result, title, by_word_class)


def _sv_figure(result: Mapping[str, Any], title: str | None, by_word_class: bool):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.add_subplot()
    x, y = _curve(result["sv_accuracy"])
    ax.plot(x, y, marker="o", linewidth=2, drawstyle="steps-pre", color="C0", label=f"SV accuracy ({result.get('n_seeds', '?')} seeds)")
    if by_word_class and result.get("sv_accuracy_by_word_class"):
        for i, (cls, curve) in enumerate(result["sv_accuracy_by_word_class"].items()):
            cx, cy = _curve(curve)
            ax.plot(cx, cy, linewidth=1, drawstyle="steps-pre", alpha=0.8, color=f"C{i + 2}", label=f"SV: {cls}")
    seed_acc = result.get("seed_accuracy_with_variants")
    if seed_acc is None:
        seed_acc = result.get("seed_accuracy")
    if seed_acc is not None:
        ax.axhline(seed_acc, linestyle="--", color="C1", label=f"seed accuracy = {seed_acc:.3f}")
    mc = result.get("matching_correctness")
    if mc is not None:
        ax.axvline(float(mc), linestyle=":", color="k", label=f"MC = {float(mc):.2f}")
    if result.get("accuracy") is not None:
        ax.axhline(result["accuracy"], linestyle="-.", color="0.5", linewidth=1,
                   label=f"variant accuracy = {result['accuracy']:.3f}")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("correctness threshold CT (share of a seed's variants that must be right)")
    ax.set_ylabel("SV accuracy (share of seeds)")
    ax.set_title(title or "MERGE seed-variant accuracy")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    return fig
