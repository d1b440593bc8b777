"""BERTScore columns of the benchmark: precision, recall and F1 at every layer, from korbertscore.

One call of ``kometrics.korbertscore.score_layers`` runs the encoder once and returns P/R/F1 for every
requested layer (layer L as in ``score(num_layers=L)``: the output of the first L blocks, final norm included
where the model has one; 0 = the embeddings); with ``idf`` on, pieces are weighted by
``idf(t) = log((M + 1) / (df(t) + 1))`` over the references (korbertscore's definition, as bert_score).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

__all__ = ["PRF", "layer_scores", "model_depth", "default_layer"]

#: Keys of one layer's scores, in the paper's order.
PRF = ("P", "R", "F1")
_ALIASES = {"P": ("P", "precision", "p"), "R": ("R", "recall", "r"), "F1": ("F1", "f1", "F", "f")}


def _normalise(layer_out: dict) -> dict[str, np.ndarray]:
    out = {}
    for key, names in _ALIASES.items():
        for name in names:
            if name in layer_out:
                out[key] = np.asarray(layer_out[name], dtype=np.float64)
                break
        else:
            raise KeyError(f"korbertscore.score_layers returned keys {sorted(layer_out)}; expected {key}")
    return out


def layer_scores(candidates: Sequence[str], references: Sequence[str], model_type: str,
                 layers: Sequence[int] | None = None, idf: bool = False, batch_size: int = 64,
                 device: str | None = None, exclude_special_tokens: bool = False) -> dict[int, dict[str, np.ndarray]]:
    """``{layer: {"P", "R", "F1": float64 array per pair}}`` for ``layers`` (None: every layer 0..L)."""
    from kometrics import korbertscore

    fn = getattr(korbertscore, "score_layers", None)
    if fn is None:
        raise RuntimeError("kometrics.korbertscore.score_layers is not available in this installation; the "
                           "BERT columns of the paraphrase benchmark need it (or pass --no-bert)")
    raw = fn(list(candidates), list(references), model_type, layers=None if layers is None else list(layers),
             idf=idf, batch_size=batch_size, device=device, exclude_special_tokens=exclude_special_tokens)
    return {int(layer): _normalise(v) for layer, v in sorted(raw.items())}


def model_depth(model_type: str) -> int:
    """Number of transformer layers of the model (``num_hidden_layers`` of its config)."""
    from transformers import AutoConfig

    cfg = AutoConfig.from_pretrained(model_type)
    for name in ("num_hidden_layers", "n_layer", "num_layers"):
        if hasattr(cfg, name):
            return int(getattr(cfg, name))
    raise ValueError(f"cannot tell the depth of {model_type!r} from its config")


def default_layer(model_type: str) -> int:
    """The layer Table 2 reports: korbertscore's documented layer for the model when it has one, else the
    paper's choice scaled to the depth (layer 8 of 12: ``round(8 / 12 * depth)``)."""
    depth = model_depth(model_type)
    fn = None
    try:
        from kometrics import korbertscore

        fn = getattr(korbertscore, "default_num_layers", None)
        if fn is None:
            from kometrics.korbertscore.embedding import default_num_layers as fn
    except ImportError:
        fn = None
    if fn is not None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "no known default layer": the depth rule below is the same
                return int(fn(model_type, depth))
        except Exception:  # noqa: BLE001 - an API change there must not break the benchmark
            pass
    return max(0, min(depth, round(8 / 12 * depth)))
