"""MERGE seed-variant accuracy: does an NLI model get the minimal variants of a seed right, not just the seed?"""

from __future__ import annotations

from typing import Any

import datasets
import evaluate

from .fonts import hangul_font
from .inputs import as_flags, as_labels, as_seed_ids, as_word_classes, check_lengths
from .plotting import plot_sv_curve
from .scoring import score

# evaluate.load copies only the siblings this file imports itself; the Space's app reaches plot_sv_curve here
# (and plotting needs its Hangul font helper).
__all__ = ["MergeSvAccuracy", "hangul_font", "plot_sv_curve", "score"]

_CITATION = """\
@article{merge2025,
  title   = {{MERGE}: Minimal Expression-Replacement GEneralization Test for Natural Language Inference},
  author  = {Zgreab{\\u{a}}n, M{\\u{a}}d{\\u{a}}lina and Deoskar, Tejaswini and Abzianidze, Lasha},
  journal = {arXiv preprint},
  year    = {2025}
}
"""

_DESCRIPTION = """\
MERGE (Minimal Expression-Replacement GEneralization) evaluates an NLI model on a seed problem together with
its variants: copies of the premise and hypothesis in which one open-class word shared by both is replaced
by a masked-LM suggestion (the label is kept). The seed-variant accuracy SV(CT) is the share of seeds for
which at least a share CT of the variants is classified correctly; the matching correctness MC is the CT
whose SV accuracy is closest to the plain accuracy on the seeds (a low MC means poor generalisation). For
Korean NLI (KLUE-NLI, KorNLI) the variants come from the MERE generator in kometrics
(`kometrics merge generate`).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `int`): predicted class ids, one per row (seed rows and variant rows).
    references (`list` of `int`): gold class ids. Floats, bools, strings and negative ids are rejected.
    seed_ids (`list` of `str`): the id of the seed problem each row belongs to.
    is_seed (`list` of `bool`, optional): True on the row of the seed problem itself (at most one per seed id),
        False on variants. Without it every row is a variant: no seed accuracy and no MC.
    word_classes (`list` of `str`, optional): the class of the replaced word on variant rows (e.g. "NOUN",
        "VERB", "ADJ", "ADV"); "" on seed rows. Gives the per-class SV curves.
    thresholds (`list` of `float`, optional): the correctness thresholds CT, each in (0, 1]; default
        0.05, 0.10, ..., 1.00. Read as exact fractions (0.15 is 3/20); a seed passes when
        correct_variants / variants >= CT.
Returns:
    accuracy (`float`): accuracy over the variant rows, in [0, 1].
    seed_accuracy (`float` or None): accuracy over the seed rows.
    sv_accuracy (`dict` float -> float): {CT: share of seeds (with >= 1 variant) whose share of correct
        variants is >= CT}; non-increasing in CT.
    matching_correctness (`float` or None): the CT whose SV accuracy is closest to the seed accuracy of the
        same seeds (ties: the higher CT).
    sv_accuracy_by_word_class (`dict` or None): {word class: {CT: SV accuracy over that class's variants}}.
    variant_accuracy_given_seed_correct / variant_accuracy_given_seed_wrong (`float` or None): accuracy over
        the variants of seeds the model got right / wrong.
    n_seeds, n_variants, n_seeds_without_variants (`int`): seeds in the curve, variant rows, and seeds with a
        seed row but no variant (left out of the curves, with a warning).
    seed_accuracy_with_variants (`float` or None): seed accuracy over the seeds in the curve (MC's target).
    n_variants_without_word_class (`int` or None): variant rows with word class "" (left out per class).

Example 1: two seeds with their variants; the model gets both seeds right but only some variants.
    >>> import evaluate
    >>> merge = evaluate.load("metrics/merge_sv_accuracy")  # from a checkout; or the published Space id
    >>> r = merge.compute(
    ...     predictions=[0, 0, 0, 1, 2, 2, 2, 2],
    ...     references=[0, 0, 0, 0, 2, 2, 2, 2],
    ...     seed_ids=["a", "a", "a", "a", "b", "b", "b", "b"],
    ...     is_seed=[True, False, False, False, True, False, False, False],
    ...     thresholds=[0.5, 0.75, 1.0])
    >>> r["seed_accuracy"], round(r["accuracy"], 4)
    (1.0, 0.8333)
    >>> r["sv_accuracy"]
    {0.5: 1.0, 0.75: 0.5, 1.0: 0.5}
    >>> r["matching_correctness"]
    0.5
    >>> round(r["variant_accuracy_given_seed_correct"], 4), r["variant_accuracy_given_seed_wrong"]
    (0.8333, None)

Example 2: variants only (no is_seed), per word class, batch by batch; the default CT grid has 20 points.
    >>> merge = evaluate.load("metrics/merge_sv_accuracy")
    >>> merge.add_batch(predictions=[1, 1, 0], references=[1, 1, 1], seed_ids=["s1", "s1", "s1"],
    ...                 word_classes=["NOUN", "VERB", "VERB"])
    >>> merge.add_batch(predictions=[2, 2], references=[2, 2], seed_ids=["s2", "s2"],
    ...                 word_classes=["NOUN", "NOUN"])
    >>> r = merge.compute()
    >>> len(r["sv_accuracy"]), r["sv_accuracy"][0.5], r["sv_accuracy"][0.7], r["matching_correctness"]
    (20, 1.0, 0.5, None)
    >>> r["sv_accuracy_by_word_class"]["NOUN"][1.0], r["sv_accuracy_by_word_class"]["VERB"][1.0]
    (1.0, 0.0)

Example 3: bad input is refused with the argument and the row named.
    >>> merge.compute(predictions=[0, 1.5], references=[0, 1], seed_ids=["a", "a"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    [...]
    TypeError: predictions[1] is 1.5 (float): labels must be integer class ids [...]
"""

def _fill_optional(n: int, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Stand-ins for optional inputs that were not given: None flags (= no seed rows given), '' classes."""
    out = dict(kwargs)
    if out.get("is_seed") is None:
        out["is_seed"] = [None] * n
    if out.get("word_classes") is None:
        out["word_classes"] = [""] * n
    return out


def _check_batch(predictions: Any, references: Any, kwargs: dict[str, Any]) -> None:
    """Refuse what datasets would silently cast (1.7 -> 1 in an int64 column), naming the row."""
    preds = as_labels(predictions, "predictions")
    refs = as_labels(references, "references")
    ids = as_seed_ids(kwargs["seed_ids"]) if kwargs.get("seed_ids") is not None else None
    if ids is None:
        raise ValueError("seed_ids is missing: pass the seed id of every row")
    flags = kwargs.get("is_seed")
    if flags is not None and isinstance(flags, list) and all(v is None for v in flags):
        flags = None  # the stand-in of _fill_optional (compute -> add_batch)
    flags = None if flags is None else as_flags(flags)
    classes = kwargs.get("word_classes")
    classes = None if classes is None else as_word_classes(classes)
    check_lengths(predictions=preds, references=refs, seed_ids=ids, is_seed=flags, word_classes=classes)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MergeSvAccuracy(evaluate.Metric):
    """MERGE seed-variant accuracy (SV curve, matching correctness, per-class curves)."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "predictions": datasets.Value("int64"),
                "references": datasets.Value("int64"),
                "seed_ids": datasets.Value("string"),
                "is_seed": datasets.Value("bool"),
                "word_classes": datasets.Value("string"),
            }),
            reference_urls=["https://github.com/kometrics/kometrics"],
        )

    # is_seed and word_classes are optional: evaluate wants every feature column, so absent ones are
    # filled with stand-ins (None flags, '' classes) that _compute reads back as "not given".
    def compute(self, *, predictions=None, references=None, **kwargs):
        """Compute the MERGE metrics (see the arguments below); is_seed and word_classes are optional."""
        if predictions is not None or references is not None:  # checked once, in add_batch
            if predictions is None or references is None:
                raise ValueError("pass both predictions and references (or neither, after add_batch)")
            kwargs = _fill_optional(len(predictions), kwargs)
        return super().compute(predictions=predictions, references=references, **kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of rows (predictions, references, seed_ids, optional is_seed / word_classes)."""
        _check_batch(predictions, references, kwargs)
        return super().add_batch(predictions=predictions, references=references,
                                 **_fill_optional(len(predictions), kwargs))

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one row (prediction, reference, seed_ids=..., optional is_seed=... / word_classes=...)."""
        one = {k: [v] for k, v in kwargs.items() if v is not None}
        _check_batch([prediction], [reference], one)
        kwargs = {k: v[0] for k, v in _fill_optional(1, one).items()}
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def _compute(self, predictions, references, seed_ids, is_seed, word_classes, thresholds=None):
        given = [v is not None for v in is_seed]
        if any(given) and not all(given):
            i = given.index(not given[0])
            raise ValueError(f"is_seed[{i}] is {is_seed[i]!r} while is_seed[0] is {is_seed[0]!r}: give is_seed "
                             "for every batch or for none")
        flags = is_seed if given and given[0] else None
        classes = word_classes if any(word_classes) else None
        return score(predictions, references, seed_ids, is_seed=flags, word_classes=classes, thresholds=thresholds)
