"""The paper's n-gram baselines at sentence level (Table 2): BLEU, GLEU, TER and chrF.

- BLEU: ``sacrebleu.metrics.BLEU(tokenize=..., smooth_method=..., effective_order=True).sentence_score``, i.e.
  what ``sacrebleu.sentence_bleu`` computes (default smoothing ``exp``), divided by 100 (range 0-1).
- TER: ``sacrebleu.metrics.TER().sentence_score`` on text pre-tokenized by the chosen tokenizer (sacrebleu's
  TER splits on whitespace and has no tokenizer option), divided by 100: edits per reference token, 0 = same,
  can exceed 1; lower is better, so its correlation with human scores is negative.
- chrF: ``sacrebleu.metrics.CHRF().sentence_score`` (character 6-grams, beta 2) / 100; chrF ignores
  whitespace and works on characters, so the tokenization option does not change it.
- GLEU: Google's sentence GLEU (Wu et al. 2016) from ``nltk.translate.gleu_score.sentence_gleu`` over 1-4
  grams of the tokenized text: min(n-gram precision, n-gram recall), range 0-1.

Tokenization (``tokenize``): ``ko-mecab`` (Korean morphemes, sacrebleu's MeCab-ko tokenizer; default),
``char`` (characters) or ``13a`` (the WMT default: spaces and punctuation).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cache

import numpy as np

__all__ = ["TOKENIZATIONS", "NGRAM_METRICS", "get_tokenizer", "sentence_scores"]

TOKENIZATIONS = ("ko-mecab", "char", "13a")
#: Column names, in the paper's order.
NGRAM_METRICS = ("BLEU", "GLEU", "TER", "chrF")


@cache
def get_tokenizer(name: str) -> Callable[[str], str]:
    """sacrebleu's tokenizer ``name`` (returns the text with tokens separated by single spaces)."""
    if name not in TOKENIZATIONS:
        raise ValueError(f"tokenize must be one of {TOKENIZATIONS}, got {name!r}")
    from sacrebleu.metrics.bleu import _get_tokenizer

    try:
        return _get_tokenizer(name)()
    except (ImportError, RuntimeError) as e:  # ko-mecab without its dictionary
        raise RuntimeError(f"tokenize={name!r} is not usable here ({e}); install sacrebleu[ko] or use "
                           "tokenize='char'") from e


def sentence_scores(candidates: Sequence[str], references: Sequence[str], tokenize: str = "ko-mecab",
                    bleu_smooth: str = "exp",
                    progress: Callable[[Iterable, str, int], Iterable] | None = None) -> dict[str, np.ndarray]:
    """BLEU, GLEU, TER and chrF of every (candidate, reference) pair, each as a float64 array in 0-1 units
    (TER may exceed 1). ``progress(iterable, desc, total)`` wraps the loop (e.g. a tqdm)."""
    from nltk.translate.gleu_score import sentence_gleu
    from sacrebleu.metrics import BLEU, CHRF, TER

    if len(candidates) != len(references):
        raise ValueError(f"candidates has {len(candidates)} items but references has {len(references)}")
    tok = get_tokenizer(tokenize)
    bleu = BLEU(tokenize=tokenize, smooth_method=bleu_smooth, effective_order=True)
    ter = TER()
    chrf = CHRF()
    out = {name: np.empty(len(candidates)) for name in NGRAM_METRICS}
    pairs: Iterable = enumerate(zip(candidates, references))
    if progress is not None:
        pairs = progress(pairs, f"BLEU/GLEU/TER/chrF ({tokenize})", len(candidates))
    for i, (cand, ref) in pairs:
        cand_tok, ref_tok = tok(cand), tok(ref)
        out["BLEU"][i] = bleu.sentence_score(cand, [ref]).score / 100.0
        out["GLEU"][i] = sentence_gleu([ref_tok.split()], cand_tok.split(), min_len=1, max_len=4)
        out["TER"][i] = ter.sentence_score(cand_tok, [ref_tok]).score / 100.0
        out["chrF"][i] = chrf.sentence_score(cand, [ref]).score / 100.0
    return out
