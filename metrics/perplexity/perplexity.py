# Copyright 2026 The kometrics developers.
# Licensed under the Apache License, Version 2.0.
"""Perplexity of causal LMs and pseudo-perplexity of masked LMs, with tokenizer-free normalisations."""

import datasets
import evaluate

from .api import score, token_surprisals
from .model_setup import resolve_device, resolve_dtype
from .modeling import causal_nll
from .ngram import is_ngram_model
from .scoring import summarize, validate_predictions

_CITATION = """\
@inproceedings{salazar-etal-2020-masked,
    title = "Masked Language Model Scoring",
    author = "Salazar, Julian and Liang, Davis and Nguyen, Toan Q. and Kirchhoff, Katrin",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020",
    pages = "2699--2712",
    url = "https://aclanthology.org/2020.acl-main.240",
}
@inproceedings{kauf-ivanova-2023-better,
    title = "A Better Way to Do Masked Language Model Scoring",
    author = "Kauf, Carina and Ivanova, Anna",
    booktitle = "Proceedings of the 61st Annual Meeting of the Association for Computational Linguistics (Volume 2: Short Papers)",
    year = "2023",
    pages = "925--935",
    url = "https://aclanthology.org/2023.acl-short.80",
}
"""

_DESCRIPTION = """\
Perplexity (PPL) measures how well a language model predicts a text: PPL = exp(NLL / N) = 2^H, where NLL is
the summed negative log-likelihood of the N scored tokens (nats) and H the cross-entropy in bits per token.
Lower is better; a uniform model over V tokens has PPL = V.

Perplexity is only comparable between models that share a tokenizer. This metric also reports the same NLL
per tokenizer-free unit: bits per character (Unicode code points), bits per byte (UTF-8) and per-word
perplexity (whitespace-separated eojeol), which compare models with different vocabularies. Texts are
NFC-normalised first (an option turns it off), so the model and the counts see the same text and NFD input
(decomposed Hangul, e.g. from macOS) scores as its NFC form.

mode="causal" (default) scores a causal LM (e.g. "skt/kogpt2-base-v2"); texts longer than the context are
scored with a sliding window. mode="pseudo" scores a masked LM (e.g. "klue/bert-base") with the
pseudo-log-likelihood of Salazar et al. (2020): each token masked in turn; PPPL = exp(-PLL / N).

An n-gram LM (an ARPA file, a kenlm binary file, or the folder written by `kometrics perplexity ngram`) is
scored with kenlm, with the same outputs: its unit (character, morpheme, eojeol) comes from the metadata
written at training time; <s> is context, </s> is predicted and counted; unknown units get the model's <unk>
probability and are counted in `unknown_units`.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the texts to score. Empty strings and non-strings are errors naming the index
        (empty="nan" turns empty or unscorable texts into NaN with a warning instead).
    model_id (str): Hub id or local path of the model, e.g. "skt/kogpt2-base-v2" (causal) or
        "klue/bert-base" (pseudo). Loaded once per (model, device, dtype) and reused.
    batch_size (int): sequences per forward pass (default 16). Scores do not depend on it.
    max_tokens (int): padded tokens (sequences x longest) per forward pass (default 8192); a longer window
        goes alone. Bounds memory with batch_size; scores do not depend on it.
    add_start_token (bool): causal mode; prepend the model's BOS (else its EOS, as GPT-2 models use
        <|endoftext|> for both) so that the first token is scored too (default True). With False, or for a
        model with neither, the first token is context only and is not counted (a warning says so).
    max_length (int, optional): window length in tokens (start token included); default the model's context.
        Texts are never truncated: longer ones are scored with a sliding window.
    stride (int, optional): causal mode; how far the window moves (default max_length // 2); each token is
        scored once, with at least max_length - stride tokens of context.
    device (str or torch.device, optional): "auto" (default: CUDA when available), "cpu", "cuda", "cuda:1", "gpu",
        "mps".
    dtype (str or torch.dtype, optional): "float32" (default), "float64", "float16"/"fp16", "bfloat16"/"bf16" (a
        "torch." prefix is allowed).
    mode (str): "causal" (default) or "pseudo" (masked LM pseudo-perplexity).
    pll_variant (str): pseudo mode; "original" (mask one token) or "word_l2r" (also mask the later pieces of
        the same word; Kauf & Ivanova 2023).
    padding_side (str, optional): causal mode; "left" or "right" (default: the tokenizer's). Scores do not
        depend on it.
    empty (str): "error" (default) or "nan". A text of invisible characters only (zero-width spaces, BOM,
        control characters) is an empty text.
    normalize (str or None): Unicode normalisation applied before scoring and counting: "NFC" (default),
        "NFKC", or None (texts as given). Part of the signature.
    ngram_unit (str, optional): n-gram models without metadata only: "char", "morpheme" or "eojeol".
    ngram_eos (bool): n-gram models; predict and count </s> (default True, the usual n-gram perplexity). False
        gives the NLL of the text as a sentence beginning, as a causal LM with its start token does.
Returns:
    perplexities (list of float): per text, exp(nll_sums[i] / token_counts[i]); range [1, inf).
    mean_perplexity (float): arithmetic mean of perplexities (as evaluate's perplexity).
    corpus_perplexity (float): exp(sum of NLL / sum of scored tokens).
    bits_per_token (float): sum of NLL / (scored tokens * ln 2) = log2(corpus_perplexity).
    bits_per_character (float): sum of NLL in bits / code points of the (normalised) texts.
    bits_per_byte (float): sum of NLL in bits / UTF-8 bytes of the (normalised) texts.
    word_perplexity (float): exp(sum of NLL / whitespace-separated words).
    nll_sums (list of float): per text, summed negative log-likelihood in nats.
    token_counts, char_counts, byte_counts, word_counts (list of int): per text.
    signature (str): model, mode, dtype, window, start token, stride and normalisation behind the numbers
        (n-gram models: unit, order, smoothing, <s>/</s>/<unk> handling, tokenizer, training data hash), and
        the version.
    unknown_units (list of int): n-gram models only; per text, units not in the model's vocabulary.

The examples use "skt/kogpt2-base-v2" (causal) and "klue/bert-base" (pseudo), as you would. Their printed
values hold for any model (the tests run them on tiny random stand-ins for those ids); the metric card
shows the figures of a real model.

Example 1: a causal LM; bits per character is the same NLL counted over characters; the signature records
the model and the window (its context, by default) behind the numbers.
    >>> import math
    >>> import evaluate
    >>> perplexity = evaluate.load("metrics/perplexity")  # from a checkout; or the published Space id
    >>> texts = ["오늘은 날씨가 맑다.", "한국어 문장을 평가합니다."]
    >>> results = perplexity.compute(predictions=texts, model_id="skt/kogpt2-base-v2", batch_size=2)
    >>> sorted(results)  # doctest: +NORMALIZE_WHITESPACE
    ['bits_per_byte', 'bits_per_character', 'bits_per_token', 'byte_counts', 'char_counts',
     'corpus_perplexity', 'mean_perplexity', 'nll_sums', 'perplexities', 'signature', 'token_counts',
     'word_counts', 'word_perplexity']
    >>> results["char_counts"], results["word_counts"], all(p > 1 for p in results["perplexities"])
    ([11, 14], [3, 3], True)
    >>> bits = sum(results["nll_sums"]) / math.log(2)
    >>> round(results["bits_per_character"] * sum(results["char_counts"]) / bits, 6)
    1.0
    >>> round(math.log2(results["corpus_perplexity"]) / results["bits_per_token"], 6)
    1.0
    >>> results["signature"]  # doctest: +ELLIPSIS
    'perplexity|mode:causal|model:skt/kogpt2-base-v2|dtype:float32|window:[...]'

Example 2: scores do not depend on the batch size or the padding side.
    >>> a = perplexity.compute(predictions=texts, model_id="skt/kogpt2-base-v2", batch_size=1)
    >>> b = perplexity.compute(predictions=texts, model_id="skt/kogpt2-base-v2", batch_size=2,
    ...                        padding_side="left")
    >>> all(abs(x - y) <= 1e-5 * x for x, y in zip(a["perplexities"], b["perplexities"]))
    True

Example 3: masked LM pseudo-perplexity; [CLS] and [SEP] are never masked nor counted.
    >>> pseudo = perplexity.compute(predictions=["서울은 한국의 수도이다."], model_id="klue/bert-base",
    ...                             mode="pseudo")
    >>> pseudo["token_counts"][0] > 0, pseudo["perplexities"][0] > 1
    (True, True)
    >>> pseudo["signature"]  # doctest: +ELLIPSIS
    'perplexity|mode:pseudo|model:klue/bert-base|dtype:float32|window:[...]|pll:original|norm:NFC|version:0.1.0'
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Perplexity(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string")}),
            reference_urls=[
                "https://huggingface.co/docs/transformers/perplexity",
                "https://aclanthology.org/2020.acl-main.240",
            ],
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score the texts (see the arguments below). The types of ``predictions`` are checked before
        evaluate's Arrow encoding, which would silently turn 3 into "3"."""
        if predictions is not None:
            validate_predictions(predictions, empty="nan")
        return super().compute(predictions=predictions, references=references, **kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of texts to score later; their types are checked here."""
        if predictions is not None:
            validate_predictions(predictions, empty="nan")
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions, model_id, batch_size=16, add_start_token=True, max_length=None, stride=None,
                 device=None, dtype=None, mode="causal", pll_variant="original", padding_side=None,
                 empty="error", ngram_unit=None, ngram_eos=True, max_tokens=8192, normalize="NFC"):
        # validate -> model NLL -> shape, all in api.score (shared with the library call and the CLI)
        return score(predictions, model_id, batch_size=batch_size, add_start_token=add_start_token,
                     max_length=max_length, stride=stride, device=device, dtype=dtype, mode=mode,
                     pll_variant=pll_variant, padding_side=padding_side, empty=empty, ngram_unit=ngram_unit,
                     ngram_eos=ngram_eos, max_tokens=max_tokens, normalize=normalize)


__all__ = ["Perplexity", "causal_nll", "is_ngram_model", "resolve_device", "resolve_dtype", "score", "summarize",
           "token_surprisals", "validate_predictions"]
