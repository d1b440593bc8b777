"""Perplexity of causal LMs and pseudo-perplexity of masked LMs, with bits per character/byte.

Library API (the evaluate module ``metrics/perplexity`` calls the same ``score``):

>>> from kometrics.perplexity import score, token_surprisals
>>> score(["한국어 문장입니다."], "skt/kogpt2-base-v2")["bits_per_character"]  # doctest: +SKIP
>>> token_surprisals("한국어 문장입니다.", "skt/kogpt2-base-v2")  # [(piece, bits), ...]  # doctest: +SKIP

``score`` gives the same result as ``evaluate.load("metrics/perplexity").compute``; ``make_compute_metrics`` is
the Trainer hook (a fixed reference LM scores the generations).
"""

from .api import VERSION, score, signature, token_surprisals
from .modeling import causal_nll, clear_model_cache, load_model, pseudo_nll, sliding_windows
from .scoring import bits_per_unit, perplexity, summarize, unit_counts, validate_predictions
from .trainer import make_compute_metrics

__all__ = [
    "VERSION",
    "make_compute_metrics",
    "score",
    "token_surprisals",
    "signature",
    "causal_nll",
    "pseudo_nll",
    "load_model",
    "clear_model_cache",
    "sliding_windows",
    "summarize",
    "perplexity",
    "bits_per_unit",
    "unit_counts",
    "validate_predictions",
]
