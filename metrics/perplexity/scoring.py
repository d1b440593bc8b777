"""The arithmetic of perplexity: from summed negative log-likelihoods to the numbers users read.

Notation (Jurafsky & Martin, *Speech and Language Processing*, ch. 3): a model :math:`P_\\theta` scores tokens :math:`w_1..w_N`;
the per-token cross-entropy in bits is

    H = -1/N * sum_t log2 P(w_t | w_<t)        and        PPL = 2^H = exp(NLL / N)

where NLL = -sum_t ln P(w_t | w_<t) is the summed negative log-likelihood in nats. Every function here
takes NLL sums (nats) and unit counts; nothing here touches a model. Perplexity compares models only under
the same tokenizer; bits per character / byte divide the same NLL by a tokenizer-free count, which is what
makes models with different vocabularies comparable.
"""

from __future__ import annotations

import math
import unicodedata
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = [
    "LN2",
    "VERSION",
    "NORMALIZATIONS",
    "normalize_text",
    "validate_predictions",
    "unit_counts",
    "perplexity",
    "bits",
    "bits_per_unit",
    "summarize",
]

LN2 = math.log(2.0)
#: Version of the metric (the kometrics release it ships with), part of every signature.
VERSION = "0.1.0"
#: Unicode normalisation of the texts before the model sees them: "NFC" (default; NFD-decomposed Hangul, as
#: macOS file names give it, becomes the precomposed syllables), "NFKC", or None (texts as given).
NORMALIZATIONS = ("NFC", "NFKC", None)
# Characters that show nothing: whitespace, control (Cc), format (Cf: zero-width space, BOM ...), separators.
_INVISIBLE = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})


def check_normalize(normalize: Any) -> str | None:
    """The normalisation form to apply (``False`` means None); raises ``ValueError`` for an unknown one."""
    if normalize is False:
        return None
    if normalize not in NORMALIZATIONS:
        raise ValueError(f"normalize must be one of {NORMALIZATIONS}, got {normalize!r}")
    return normalize


def normalize_text(text: str, normalize: str | None = "NFC") -> str:
    """``text`` in the Unicode form ``normalize`` (None: as given); ``""`` when it has no visible character
    (only whitespace, zero-width spaces, BOM or control characters): such a text is an empty text."""
    if normalize is not None and not unicodedata.is_normalized(normalize, text):
        text = unicodedata.normalize(normalize, text)
    if all(ch.isspace() or unicodedata.category(ch) in _INVISIBLE for ch in text):
        return ""
    return text


def validate_predictions(predictions: Any, empty: str = "error", normalize: str | None = "NFC") -> list[str]:
    """Check the input texts once, at the face; return them as a list, normalised (see
    :func:`normalize_text`): the model and the unit counts see the same text.

    - not a list/tuple, or an item that is not a ``str`` (``None`` included): ``TypeError`` naming the index;
    - an empty string, or one of invisible characters only: ``ValueError`` naming the index, unless
      ``empty="nan"`` (the text then gets a NaN perplexity and zero counts, and a warning says which indices;
      corpus figures leave it out).
    """
    if empty not in ("error", "nan"):
        raise ValueError(f"empty must be 'error' or 'nan', got {empty!r}")
    normalize = check_normalize(normalize)
    if isinstance(predictions, str) or not isinstance(predictions, Sequence):
        raise TypeError(f"predictions must be a list of strings, got {type(predictions).__name__}")
    texts = list(predictions)
    if not texts:
        raise ValueError("predictions is empty; pass at least one text")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"predictions[{i}] is {type(text).__name__} ({text!r}), not a string; "
                            "pass one string per text")
        texts[i] = normalize_text(text, normalize)
        if texts[i] == "" and empty == "error":
            what = "empty" if text == "" else (f"{text!r}: only spaces or invisible characters (zero-width "
                                               "spaces, BOM, control characters), an empty text")
            raise ValueError(f'predictions[{i}] is {what}; pass a non-empty string or set empty="nan"')
    return texts


def unit_counts(text: str) -> dict[str, int]:
    """Tokenizer-free sizes of ``text`` as given: ``chars`` (Unicode code points), ``bytes`` (UTF-8) and
    ``words`` (whitespace-separated units, i.e. Korean eojeol).

    Pass the text the model scored (:func:`validate_predictions` normalises it, NFC by default, so that a
    Hangul syllable typed as three conjoining jamo counts as one character, as its precomposed form does):
    the counts and the likelihood must see the same text.
    """
    return {"chars": len(text), "bytes": len(text.encode("utf-8")), "words": len(text.split())}


def perplexity(nll_sum: float, count: int) -> float:
    """exp(NLL / count): perplexity per unit (token, word ...). NaN when ``count`` is 0. Range [1, inf)
    for tokens of a normalised model."""
    if count <= 0:
        return float("nan")
    return math.exp(nll_sum / count)


def bits(nll_sum: float) -> float:
    """Nats to bits: NLL / ln 2."""
    return nll_sum / LN2


def bits_per_unit(nll_sum: float, count: int) -> float:
    """Average code length in bits per unit: NLL / (count * ln 2). NaN when ``count`` is 0."""
    if count <= 0:
        return float("nan")
    return nll_sum / (count * LN2)


def summarize(nll_sums: Sequence[float], token_counts: Sequence[int], texts: Sequence[str],
              signature: str | None = None) -> dict[str, Any]:
    """Shape the result: per-text figures and corpus figures from per-text NLL sums (nats) and scored
    token counts.

    - ``perplexities[i] = exp(nll_sums[i] / token_counts[i])`` (NaN for a text with nothing scored);
    - ``mean_perplexity``: arithmetic mean of the finite per-text perplexities (evaluate's definition);
    - ``corpus_perplexity = exp(sum NLL / sum tokens)`` (token-weighted; the number LM papers report);
    - ``bits_per_token = sum NLL / (sum tokens * ln 2)`` = log2(corpus_perplexity);
    - ``bits_per_character``, ``bits_per_byte``: sum NLL in bits over code points / UTF-8 bytes of ``texts``
      (the texts the model scored: NFC unless normalisation was turned off);
    - ``word_perplexity = exp(sum NLL / sum words)`` over whitespace-separated eojeol.

    Texts with no scored token are left out of every corpus figure (their units too), with a warning.
    """
    if not (len(nll_sums) == len(token_counts) == len(texts)):
        raise ValueError("nll_sums, token_counts and texts must have the same length")
    counts = [unit_counts(t) for t in texts]
    ppls = [perplexity(n, c) for n, c in zip(nll_sums, token_counts)]
    keep = [i for i, c in enumerate(token_counts) if c > 0]
    dropped = [i for i, c in enumerate(token_counts) if c <= 0]
    if dropped:
        warnings.warn(f"{len(dropped)} text(s) had no scored token (indices {dropped[:10]}"
                      f"{' ...' if len(dropped) > 10 else ''}): their perplexity is NaN and they are left out "
                      "of mean_perplexity and the corpus figures", stacklevel=2)
    total_nll = math.fsum(nll_sums[i] for i in keep)
    total_tokens = sum(token_counts[i] for i in keep)
    total_chars = sum(counts[i]["chars"] for i in keep)
    total_bytes = sum(counts[i]["bytes"] for i in keep)
    total_words = sum(counts[i]["words"] for i in keep)
    finite = [ppls[i] for i in keep]
    out: dict[str, Any] = {
        "perplexities": ppls,
        "mean_perplexity": math.fsum(finite) / len(finite) if finite else float("nan"),
        "corpus_perplexity": perplexity(total_nll, total_tokens),
        "bits_per_token": bits_per_unit(total_nll, total_tokens),
        "bits_per_character": bits_per_unit(total_nll, total_chars),
        "bits_per_byte": bits_per_unit(total_nll, total_bytes),
        "word_perplexity": perplexity(total_nll, total_words),
        "nll_sums": [float(n) for n in nll_sums],
        "token_counts": [int(c) for c in token_counts],
        "char_counts": [c["chars"] for c in counts],
        "byte_counts": [c["bytes"] for c in counts],
        "word_counts": [c["words"] for c in counts],
    }
    if signature is not None:
        out["signature"] = signature
    return out
