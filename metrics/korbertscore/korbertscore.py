# Copyright 2026 The kometrics authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""KorBERTScore: BERTScore for Korean (Hyeon & Choi), exact to bert_score 0.3.13, with layer tools."""

import datasets
import evaluate

from .embedding import DEFAULT_MODEL, default_layer
from .fonts import hangul_font
from .model_setup import resolve_device, resolve_dtype
from .pipeline import score, validate_inputs
from .plotting import plot_alignment
from .scoring import f1

# The sibling modules are imported here directly so that evaluate.load copies them all (plotting and its
# Hangul font helper are used by the Space; they import matplotlib only when called; default_layer names the
# default layer there).
__all__ = ["Korbertscore", "score", "f1", "plot_alignment", "hangul_font", "DEFAULT_MODEL", "default_layer",
           "resolve_device", "resolve_dtype"]
_CITATION = """\
@inproceedings{hyeon2019korbertscore,
  title     = {Measuring Similarity of Korean Sentences based on BERT},
  author    = {Hyeon, Jonghwan and Choi, Ho-Jin},
  booktitle = {Proceedings of the Korea Computer Congress (KCC)},
  year      = {2019}
}
@inproceedings{bert-score,
  title     = {BERTScore: Evaluating Text Generation with BERT},
  author    = {Tianyi Zhang* and Varsha Kishore* and Felix Wu* and Kilian Q. Weinberger and Yoav Artzi},
  booktitle = {International Conference on Learning Representations},
  year      = {2020},
  url       = {https://openreview.net/forum?id=SkeHuCVFDr}
}
"""

_DESCRIPTION = f"""\
KorBERTScore measures how similar a Korean candidate sentence is to a reference sentence with contextual
word-piece embeddings of a Korean BERT. Every candidate piece is greedily matched to its most similar
reference piece (precision), every reference piece to its most similar candidate piece (recall), and F1 is
their harmonic mean. The paper (Hyeon & Choi, KCC 2019) used ETRI KorBERT and found layer 8 of 12 best.

This implementation gives the same numbers as bert_score 0.3.13 on the same model, layer, idf and baseline
([CLS]/[SEP] kept in the max with weight 0), runs only the encoder blocks it needs, embeds long texts in
overlapping windows instead of truncating them, scores empty texts 0 with a warning, and recomputes idf
whenever the idf sentences change. The default model is {DEFAULT_MODEL!r} at layer 8 (the paper's 8 of 12,
not measured on that model here; run `kometrics korbertscore layers` to measure).
"""

_KWARGS_DESCRIPTION = """
Computes KorBERTScore (precision, recall, F1) of each prediction against its reference(s).

Args:
    predictions (list of str): candidate sentences.
    references (list of str, or list of list of str): reference sentence(s) per prediction. With several,
        precision, recall and F1 are each the best over that prediction's references (as in bert_score).
    model_type (str): Hub id or local folder of an encoder (or of a causal LM, used as an encoder). Default
        "klue/bert-base".
    num_layers (int): the layer: 0 = embeddings, L = the model's output when only its first L blocks run (with
        its final norm, if it has one, as bert_score's num_layers). Default: the
        documented layer of a known model (klue/bert-base: 8), else round(depth * 8 / 12) with a warning.
    idf (bool or list of str): weight pieces by idf, idf(t) = log((M+1)/(df(t)+1)), computed from the
        references (True) or from the given sentences. Default False (all weights 1, [CLS]/[SEP] 0).
    rescale_with_baseline (bool): rescale P, R, F each as (x - b)/(1 - b) with the baseline of this layer.
    baseline_path (str): a bert_score baseline file (CSV `LAYER,P,R,F`), e.g. from
        `kometrics korbertscore baseline`. Required with rescale_with_baseline for Korean models.
    batch_size (int): sentences per forward pass. Default 64. Scores do not depend on it.
    device (str or torch.device): "auto" (default: cuda when available), "cpu", "cuda", "cuda:1", "gpu", "mps".
    dtype (str or torch.dtype): "float32" (default), "float64", "float16"/"fp16", "bfloat16"/"bf16" (a "torch."
        prefix is allowed) for the encoder; matching is float32.
    max_length (int): longest sequence given to the model (default: the model's position limit).
    exclude_special_tokens (bool): drop [CLS]/[SEP] from matching entirely (the paper's definition).
        Default False (bert_score's behaviour).
    long_text (str): texts longer than max_length: "window" (default; overlapping windows, every piece
        embedded with context), "truncate" (with a warning) or "error".
    normalize (str or None): Unicode normalisation of every text before tokenizing: "NFC" (default; the same
        Hangul typed as conjoining jamo (NFD, e.g. from macOS) scores as its precomposed form), "NFKC", or
        None (texts as given). A change from NFC is marked in the hashcode. A text of invisible characters only (zero-width spaces,
        BOM, control characters) is an empty text: it scores 0 with the warning.
    lang (str): language code, used only to find a bert_score baseline file. Default "ko".
    verbose, nthreads, use_fast_tokenizer: accepted for compatibility with evaluate's bertscore (tokenizing
        is batched in the fast tokenizer; use_fast_tokenizer only marks the hashcode as bert_score does).

Returns:
    precision (list of float): per prediction, in [-1, 1] (about [0, 1] in practice; rescaled: ~0 for
        unrelated text, 1 for identical text).
    recall (list of float): same range.
    f1 (list of float): harmonic mean of precision and recall; 0 when a text is empty.
    best_reference (list of int): index of the reference with the highest F1 (0 with one reference).
    num_layers (int): the layer used.
    hashcode (str): model, layer, idf, rescaling and version, bert_score-style (a normalisation other than NFC
        is marked too).
    signature (str): every option that changes the numbers, and the version (sacrebleu-style), e.g.
        "korbertscore|model:klue/bert-base|layer:8|idf:no|rescale:no|special:kept|long:window|max_len:model|
        dtype:float32|norm:NFC|version:0.1.0" (one line).

The examples use "klue/bert-base", as you would. Their printed values hold for any encoder (the tests run
them on a tiny random stand-in for that id); the metric card shows the figures of a real model.

Example 1: identical sentences score 1; with several references, each score is the best over them. Without
num_layers the model's documented layer is used (klue/bert-base: 8), and the hashcode records it.
    >>> import evaluate
    >>> korbertscore = evaluate.load("metrics/korbertscore")  # from a checkout; or the published Space id
    >>> results = korbertscore.compute(predictions=["오늘은 날씨가 맑다.", "회의는 내일 열린다."],
    ...     references=[["비가 온다.", "오늘은 날씨가 맑다."], ["회의는 내일 열린다."]],
    ...     model_type="klue/bert-base")
    >>> [round(v, 4) for v in results["f1"]], results["best_reference"]
    ([1.0, 1.0], [1, 0])
    >>> results["num_layers"]
    8
    >>> results["hashcode"]  # doctest: +ELLIPSIS
    'klue/bert-base_L8_no-idf_version=korbertscore-0.1.0(hug_trans=[...])'

Example 2: a paraphrase that shares words scores above an unrelated sentence; the keywords are evaluate's
bertscore's (layer, idf, batch size), and F1 is the harmonic mean of precision and recall.
    >>> results = korbertscore.compute(predictions=["회의는 내일 열린다.", "회의는 내일 열린다."],
    ...     references=["회의가 내일 있다.", "어제 비가 내렸다."], model_type="klue/bert-base", num_layers=4,
    ...     idf=True, batch_size=8)
    >>> sorted(results)
    ['best_reference', 'f1', 'hashcode', 'num_layers', 'precision', 'recall', 'signature']
    >>> results["f1"][0] > results["f1"][1], all(0 <= f <= 1 for f in results["f1"])
    (True, True)
    >>> p, r, f = results["precision"][0], results["recall"][0], results["f1"][0]
    >>> abs(f - 2 * p * r / (p + r)) < 1e-6
    True

Example 3: an empty prediction scores 0 (with a warning naming predictions[1]).
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     results = korbertscore.compute(predictions=["회의는 내일 열린다.", ""],
    ...         references=["회의는 내일 열린다.", "무엇이든"], model_type="klue/bert-base")
    >>> results["f1"][1], any("predictions[1]" in str(w.message) for w in caught)
    (0.0, True)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Korbertscore(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/Tiiiger/bert_score",
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features(
                    {
                        "predictions": datasets.Value("string", id="sequence"),
                        "references": datasets.Sequence(datasets.Value("string", id="sequence"), id="references"),
                    }
                ),
                datasets.Features(
                    {
                        "predictions": datasets.Value("string", id="sequence"),
                        "references": datasets.Value("string", id="sequence"),
                    }
                ),
            ],
            codebase_urls=["https://github.com/Tiiiger/bert_score"],
            reference_urls=["https://arxiv.org/abs/1904.09675"],
        )

    def _compute(
        self,
        predictions,
        references,
        lang="ko",
        model_type=None,
        num_layers=None,
        verbose=False,
        idf=False,
        device=None,
        batch_size=64,
        nthreads=4,
        all_layers=False,
        rescale_with_baseline=False,
        baseline_path=None,
        use_fast_tokenizer=False,
        dtype=None,
        max_length=None,
        exclude_special_tokens=False,
        long_text="window",
        normalize="NFC",
    ):
        if all_layers:
            raise ValueError("all_layers=True is not supported here; call kometrics.korbertscore.score_layers "
                             "to score every layer in one pass")
        result = score(
            predictions,
            references,
            model_type=model_type,
            num_layers=num_layers,
            idf=idf,
            rescale_with_baseline=rescale_with_baseline,
            baseline_path=baseline_path,
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            max_length=max_length,
            exclude_special_tokens=exclude_special_tokens,
            long_text=long_text,
            lang=lang,
            use_fast_tokenizer=use_fast_tokenizer,
            normalize=normalize,
        )
        return result

    # evaluate casts the inputs to Arrow before _compute sees them, turning a misplaced list or number into a
    # string ("['다 라']", "5"): the inputs are checked here first, naming the argument and the index.
    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of predictions and references (checked here: strings, and one string or a non-empty
        list of strings per prediction)."""
        predictions, references = _checked_batch(predictions, references, self.selected_feature_format
                                                 if self.writer is not None else None)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one prediction and its reference(s) (checked as in ``add_batch``)."""
        # evaluate's own add also takes the plural keywords (predictions=..., references=...)
        prediction = kwargs.pop("predictions") if prediction is None and "predictions" in kwargs else prediction
        reference = kwargs.pop("references") if reference is None and "references" in kwargs else reference
        (prediction,), (reference,) = _checked_batch([prediction], [reference], self.selected_feature_format
                                                     if self.writer is not None else None, one=True)
        return super().add(prediction=prediction, reference=reference, **kwargs)


def _checked_batch(predictions, references, selected, one=False):
    """Validated ``(predictions, references)`` in the shape evaluate will store.

    References are all strings (one reference each) or all lists: strings mixed with lists are wrapped as
    one-item lists, as the library call reads them. ``selected`` is the format already chosen by an
    earlier batch of the same computation (None for the first): a list after single strings is refused.
    """
    name_p, name_r = ("prediction", "reference") if one else ("predictions", "references")
    if predictions is None or references is None:
        raise ValueError(f"pass both {name_p} and {name_r}")
    try:
        preds, refs, multi = validate_inputs(predictions, references)
    except (TypeError, ValueError) as e:
        message = str(e).replace("predictions[0]", name_p).replace("references[0]", name_r) if one else str(e)
        raise type(e)(message) from None
    if not preds:
        raise ValueError("predictions and references are empty: pass at least one prediction and its reference(s)")
    as_lists = selected is not None and not isinstance(selected["references"], datasets.Value)
    if selected is not None and not as_lists and multi:
        i = next(i for i, r in enumerate(references) if not isinstance(r, str))
        raise ValueError(f"{name_r if one else f'references[{i}]'} is a list, but an earlier batch of this "
                         "computation gave one reference string per prediction: give references in the same "
                         "shape in every batch (a list of one string for a single reference)")
    return preds, (refs if multi or as_lists else list(references))
