"""LMRE: LLM-based multi-reference evaluation of Korean phrase-break annotations."""

from __future__ import annotations

import datasets
import evaluate

from .formats import parse_annotation
from .lookup import load_references, references_for
from .scoring import DEFAULT_THETA, check_inputs, explain, score

# evaluate.load copies only the siblings this file imports itself (scoring needs formats): no trailing
# comment on those import lines, evaluate would read it as a download URL.
__all__ = ["Lmre", "explain", "parse_annotation"]

_CITATION = """\
@inproceedings{lmre2025,
  title     = {{LLM}-Based Multi-Reference Evaluation for Efficient and Robust Assessment of Phrase Break
               Annotations},
  booktitle = {Proceedings of Interspeech},
  year      = {2025}
}
"""

_DESCRIPTION = """\
LMRE scores a phrase-break annotation (where prosodic boundaries fall in an utterance, for TTS) against a
*set* of valid references R(W) built once by an LLM (see `kometrics lmre build`), instead of one gold
annotation: prosodic phrasing is one-to-many. For each prediction the similarity (boundary F1 or exact
match) with every reference is computed, the best reference is kept, and the prediction is accepted when
the best score is strictly greater than theta. With one reference per prediction it is the classic
single-reference evaluation.

Annotation format: the words separated by spaces, with a separate token after a word followed by a
boundary: `/` = accentual phrase (AP), `//` = intonation phrase (IP), nothing = no boundary, e.g.
`오늘은 / 날씨가 정말 // 좋네요`. An utterance of n words has n-1 scored positions: the position after the
last word (the utterance end, always a boundary) is not scored, and a trailing `/` or `//` is ignored.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): hypothesis annotations, one per utterance.
    references (`list` of `list` of `str`, or `list` of `str`): the reference annotations of each
        utterance (at least one; a plain string is a single reference). Every reference must annotate the
        same words as its prediction, else a ValueError names the index.
    similarity (`str`, default "f1"): "f1" = 2|Bh ∩ Br| / (|Bh| + |Br|) over boundary positions (1.0 when
        neither has a boundary), or "em" = 1.0 if the boundary sets are equal else 0.0.
    theta (`float`, default 0.5): acceptance threshold in [0, 1); accepted iff best score > theta.
    break_types (`str`, default "binary"): "binary" compares boundary positions only; "typed" requires
        position and type (AP `/` vs IP `//`) to match.
    return_all_scores (`bool`, default False): also return `scores`, every reference's score.
    reference_sources (`list` of `str`, optional): names of the reference folders the references came
        from, recorded in the signature (`refs:a+b`). `lmre.references_for(predictions, [folder_a,
        folder_b])` returns both the references (the union of the folders' kept annotations per utterance:
        the LMRE paper's "combined" setting) and these names.
    normalize (`str` or None, default "NFC"): Unicode normalisation of every annotation before reading ("NFC",
        "NFKC" or None = as given): the same word typed as decomposed jamo (NFD, e.g. from macOS) matches its
        precomposed form. Part of the signature. An annotation of invisible characters only (zero-width
        spaces, BOM, control characters) is empty: an error naming the index.

Returns:
    acceptance_rate (`float`): share of accepted predictions, in [0, 1].
    mean_best_score (`float`): mean of the best scores, in [0, 1].
    accepted (`list` of `bool`), best_score (`list` of `float`), best_reference_index (`list` of `int`,
        the first reference reaching the best score), best_reference (`list` of `str`, its canonical
        annotation), num_references (`list` of `int`), signature (`str`: the options that made the result).

Example 1: a multi-reference set accepts a phrasing that the first (single) reference rejects.
    >>> import evaluate
    >>> lmre = evaluate.load("metrics/lmre")  # from a checkout; or the Hub id of the published Space
    >>> refs = [["오늘은 날씨가 / 정말 좋네요", "오늘은 / 날씨가 정말 좋네요"]]
    >>> multi = lmre.compute(predictions=["오늘은 / 날씨가 정말 좋네요"], references=refs, similarity="em")
    >>> multi["accepted"], multi["best_reference_index"], multi["best_reference"]
    ([True], [1], ['오늘은 / 날씨가 정말 좋네요'])
    >>> single = lmre.compute(predictions=["오늘은 / 날씨가 정말 좋네요"], references=[refs[0][0]], similarity="em")
    >>> single["accepted"], single["acceptance_rate"]
    ([False], 0.0)

Example 2: F1 over boundary positions, binary and typed (AP `/` vs IP `//`).
    >>> preds = ["나는 / 밥을 먹고 // 학교에 갔다", "비가 온다"]
    >>> refs = [["나는 / 밥을 먹고 / 학교에 갔다", "나는 밥을 / 먹고 학교에 갔다"], ["비가 온다"]]
    >>> r = lmre.compute(predictions=preds, references=refs, similarity="f1", theta=0.6)
    >>> r["best_score"], r["accepted"], r["acceptance_rate"]
    ([1.0, 1.0], [True, True], 1.0)
    >>> r = lmre.compute(predictions=preds, references=refs, break_types="typed", theta=0.6)
    >>> r["best_score"], r["accepted"], r["signature"]
    ([0.5, 1.0], [False, True], 'lmre|sim:f1|theta:0.6|breaks:typed|final:excluded|norm:NFC|version:0.1.0')

Example 3: words must match.
    >>> lmre.compute(predictions=["가 / 나"], references=[["가 / 다"]])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    [...]
    ValueError: references[0][0] is not an annotation of the words of predictions[0] (word 1: '다' instead of '나'); [...]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Lmre(evaluate.Metric):
    """LMRE: accept a phrase-break annotation if it is close enough to one of several references."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({
                    "predictions": datasets.Value("string", id="sequence"),
                    "references": datasets.Sequence(datasets.Value("string", id="sequence"), id="references"),
                }),
                datasets.Features({
                    "predictions": datasets.Value("string", id="sequence"),
                    "references": datasets.Value("string", id="sequence"),
                }),
            ],
            codebase_urls=["https://github.com/kometrics/kometrics"],
            reference_urls=["https://www.isca-archive.org/interspeech_2025/"],
        )

    def _compute(self, predictions, references, similarity: str = "f1", theta: float = DEFAULT_THETA,
                 break_types: str = "binary", return_all_scores: bool = False, reference_sources=None,
                 normalize: str | None = "NFC"):
        return score(predictions, references, similarity, theta, break_types, return_all_scores,
                     reference_sources=reference_sources, normalize=normalize)

    def references_for(self, predictions, reference_folders):
        """Each prediction's references from one or several reference folders (several: their union, the
        LMRE paper's "combined" setting), and the folders' names for ``reference_sources``."""
        lookup = load_references(reference_folders)
        return references_for(predictions, lookup), list(lookup.sources)

    # evaluate casts the inputs to Arrow before _compute sees them, turning a misplaced list or number into a
    # string ("['가 / 나']", "5"): the inputs are checked here first, naming the argument and the index.
    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of annotations (checked here: strings, one string or non-empty list per prediction)."""
        predictions, references = _checked_batch(predictions, references, self.selected_feature_format
                                                 if self.writer is not None else None)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one annotation and its reference(s) (checked as in ``add_batch``)."""
        # evaluate's own add also takes the plural keywords (predictions=..., references=...)
        prediction = kwargs.pop("predictions") if prediction is None and "predictions" in kwargs else prediction
        reference = kwargs.pop("references") if reference is None and "references" in kwargs else reference
        (prediction,), (reference,) = _checked_batch([prediction], [reference], self.selected_feature_format
                                                     if self.writer is not None else None, one=True)
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def explain(self, prediction: str, references, similarity: str = "f1", theta: float = DEFAULT_THETA,
                break_types: str = "binary", normalize: str | None = "NFC") -> dict:
        """Per-reference scores and the boundaries that differ, for one prediction (used by the Space)."""
        return explain(prediction, references, similarity, theta, break_types, normalize)

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
        multi = check_inputs(predictions, references)
    except (TypeError, ValueError) as e:
        message = str(e).replace("predictions[0]", name_p).replace("references[0]", name_r) if one else str(e)
        raise type(e)(message) from None
    if not len(predictions):
        raise ValueError("predictions and references are empty: pass at least one annotation and its reference(s)")
    as_lists = selected is not None and not isinstance(selected["references"], datasets.Value)
    if selected is not None and not as_lists and multi:
        i = next(i for i, r in enumerate(references) if not isinstance(r, str))
        raise ValueError(f"{name_r if one else f'references[{i}]'} is a list, but an earlier batch of this "
                         "computation gave one reference string per prediction: give references in the same "
                         "shape in every batch (a list of one string for a single reference)")
    if multi or as_lists:
        references = [[r] if isinstance(r, str) else list(r) for r in references]
    return list(predictions), list(references)
