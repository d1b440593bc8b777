"""KorBERTScore: BERTScore for Korean (exact to bert_score 0.3.13), with layer sweeps, baselines and plots.

Library API:

>>> from kometrics.korbertscore import score, score_layers, similarity_matrix, plot_alignment
"""

from .embedding import (
    DEFAULT_MODEL,
    KNOWN_LAYERS,
    clear_cache,
    default_layer,
    default_num_layers,
    load_encoder,
)
from .pipeline import VERSION, score, score_layers, similarity_matrix, validate_inputs

__all__ = [
    "DEFAULT_MODEL",
    "KNOWN_LAYERS",
    "VERSION",
    "clear_cache",
    "default_layer",
    "default_num_layers",
    "load_encoder",
    "plot_alignment",
    "score",
    "score_layers",
    "similarity_matrix",
    "validate_inputs",
    "make_compute_metrics",
]


def plot_alignment(*args, **kwargs):
    """The similarity heatmap of one pair with greedy matches marked (see :mod:`.plotting`)."""
    from .plotting import plot_alignment as _plot

    return _plot(*args, **kwargs)


def make_compute_metrics(*args, **kwargs):
    """A ``compute_metrics`` for ``Seq2SeqTrainer(predict_with_generate=True)`` (see :mod:`.trainer`)."""
    from .trainer import make_compute_metrics as _make

    return _make(*args, **kwargs)
