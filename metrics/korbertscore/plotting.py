"""Figures for KorBERTScore (matplotlib is imported here only, lazily). Korean labels are drawn with a
Hangul font registered from its file (:mod:`.fonts`)."""

from __future__ import annotations

from typing import Any

from .fonts import hangul_rc
from .pipeline import similarity_matrix

__all__ = ["plot_alignment"]


def plot_alignment(candidate: str, reference: str, model_type: str | None = None, num_layers: int | None = None,
                   exclude_special_tokens: bool = False, device: str | None = None, annotate: bool = True,
                   fname: str | None = None, **kwargs: Any):
    """Heatmap of the word-piece cosine similarities of one pair (the paper's Figures 1-2).

    Rows are candidate pieces, columns reference pieces. A dot marks each candidate piece's greedy match
    (precision) and a ring each reference piece's match (recall). Returns a ``matplotlib.figure.Figure``
    (saved to ``fname`` when given).
    """
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg", force=False)
    sm = similarity_matrix(candidate, reference, model_type=model_type, num_layers=num_layers,
                           exclude_special_tokens=exclude_special_tokens, device=device, **kwargs)
    with matplotlib.rc_context(hangul_rc()):  # the texts keep the font after the context: re-drawing is fine
        return _alignment_figure(sm, annotate, fname)


def _alignment_figure(sm: dict[str, Any], annotate: bool, fname: str | None):
    from matplotlib.figure import Figure

    sim = sm["matrix"]
    ct, rt = sm["candidate_tokens"], sm["reference_tokens"]
    fig = Figure(figsize=(max(4.0, 0.55 * len(rt) + 2), max(3.0, 0.45 * len(ct) + 1.5)), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    im = ax.imshow(sim, cmap="Blues", vmin=min(0.0, float(sim.min()) if sim.size else 0.0), vmax=1.0,
                   aspect="auto")
    ax.set_xticks(range(len(rt)), labels=rt, rotation=45, ha="right", rotation_mode="anchor", fontsize=9)
    ax.set_yticks(range(len(ct)), labels=ct, fontsize=9)
    ax.set_xlabel("reference pieces")
    ax.set_ylabel("candidate pieces")
    for i, j in enumerate(sm["precision_matches"]):
        ax.plot(j, i, marker="o", color="tab:red", markersize=5, linestyle="none")
    for j, i in enumerate(sm["recall_matches"]):
        ax.plot(j, i, marker="o", markerfacecolor="none", markeredgecolor="tab:orange", markersize=11,
                linestyle="none")
    if annotate and sim.size <= 400:
        for i in range(sim.shape[0]):
            for j in range(sim.shape[1]):
                ax.text(j, i, f"{sim[i, j]:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if sim[i, j] > 0.6 else "black")
    ax.set_title(f"layer {sm['num_layers']}: P={sm['precision']:.3f} R={sm['recall']:.3f} F1={sm['f1']:.3f}"
                 " (dot: precision match, ring: recall match)", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    if fname:
        fig.savefig(fname)
    return fig
