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

from kometrics.korbertscore import default_num_layers, score_layers

__all__ = ["PRF", "layer_scores", "model_depth", "default_layer"]

#: Keys of one layer's scores, in the paper's order, and korbertscore's names for them.
PRF = ("P", "R", "F1")
_KEYS = {"P": "precision", "R": "recall", "F1": "f1"}
#: Pairs per ``score_layers`` call. A call holds every requested layer of every token of its sentences at once
#: (about ``2 * pairs * tokens * layers * hidden * 4`` bytes, twice that while they are gathered: 7 GB for the
#: 1,500 KorSTS dev pairs on Gemma-3-270M's 19 layers of 640), so corpora go in slices; with idf the weights
#: come from all references, so slicing changes no score.
PAIRS_PER_CALL = 250


def layer_scores(candidates: Sequence[str], references: Sequence[str], model_type: str,
                 layers: Sequence[int] | None = None, idf: bool = False, batch_size: int = 64,
                 device: str | None = None, exclude_special_tokens: bool = False) -> dict[int, dict[str, np.ndarray]]:
    """``{layer: {"P", "R", "F1": float64 array per pair}}`` for ``layers`` (None: every layer 0..L), scored
    :data:`PAIRS_PER_CALL` pairs at a time."""
    cands, refs = list(candidates), list(references)
    weights = refs if idf else False  # idf over ALL references, whatever the slice
    parts = [score_layers(cands[a:a + PAIRS_PER_CALL], refs[a:a + PAIRS_PER_CALL], model_type,
                          layers=None if layers is None else list(layers), idf=weights, batch_size=batch_size,
                          device=device, exclude_special_tokens=exclude_special_tokens)
             for a in range(0, max(len(cands), 1), PAIRS_PER_CALL)]
    return {int(layer): {key: np.concatenate([np.asarray(p[layer][name], dtype=np.float64) for p in parts])
                         for key, name in _KEYS.items()}
            for layer in sorted(parts[0])}


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no known default layer": the depth rule is what Table 2 wants
        return default_num_layers(model_type, model_depth(model_type))
