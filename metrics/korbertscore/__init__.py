"""KorBERTScore: BERTScore for Korean (exact to bert_score 0.3.13), with layer sweeps, baselines and plots.

Library API:

>>> from kometrics.korbertscore import score, score_layers, similarity_matrix, plot_alignment

``score`` gives the same result as ``evaluate.load("metrics/korbertscore").compute``; ``make_compute_metrics``
is the Seq2SeqTrainer hook.
"""

from .embedding import (
    DEFAULT_MODEL,
    KNOWN_LAYERS,
    clear_cache,
    default_layer,
    default_num_layers,
    known_model,
    load_encoder,
)
from .pipeline import VERSION, score, score_layers, signature, similarity_matrix, validate_inputs
from .plotting import plot_alignment
from .trainer import make_compute_metrics

__all__ = [
    "DEFAULT_MODEL",
    "KNOWN_LAYERS",
    "VERSION",
    "clear_cache",
    "default_layer",
    "default_num_layers",
    "known_model",
    "load_encoder",
    "plot_alignment",
    "score",
    "score_layers",
    "signature",
    "similarity_matrix",
    "validate_inputs",
    "make_compute_metrics",
]
