"""KLUE-STS: Pearson r, Spearman rho and F1 at threshold 3.0, exactly as the official KLUE baseline."""

import datasets
import evaluate

from .bootstrap import bootstrap_interval
from .correlation import correlation
from .scoring import as_scores, score

# evaluate.load copies only the siblings this file imports itself: scoring needs bootstrap and correlation.
__all__ = ["KlueSts", "bootstrap_interval", "correlation"]

_CITATION = """\
@inproceedings{park2021klue,
  title     = {{KLUE}: Korean Language Understanding Evaluation},
  author    = {Sungjoon Park and Jihyung Moon and Sungdong Kim and Won Ik Cho and Jiyoon Han and Jangwon Park and
               Chisung Song and Junseong Kim and Yongsook Song and Taehwan Oh and Joohong Lee and Juhyun Oh and
               Sungwon Lyu and Younghoon Jeong and Inkwon Lee and Sangwoo Seo and Dongjun Lee and Hyunwoo Kim and
               Myeonghwa Lee and Seongbo Jang and Seungwon Do and Sunkyoung Kim and Kyungtae Lim and Jongwon Lee and
               Kyumin Park and Jamin Shin and Seonghyun Kim and Lucy Park and Alice Oh and Jung-Woo Ha and Kyunghyun Cho},
  booktitle = {Thirty-fifth Conference on Neural Information Processing Systems Datasets and Benchmarks Track},
  year      = {2021},
  url       = {https://arxiv.org/abs/2105.09680}
}
"""

_DESCRIPTION = """\
KLUE-STS scores a semantic textual similarity model on the KLUE benchmark's STS task: sentence pairs rated
from 0 (no meaning overlap) to 5 (equivalent). Following the official KLUE baseline, the main metric is
Pearson's r between predicted and gold similarity scores; in addition both sides are binarised at a threshold
(3.0: a pair is "paraphrased" when its score is >= 3.0) and the F1 of the positive class is reported. This
module also reports Spearman's rho and, on request, paired bootstrap confidence intervals for all three.
Scores are on the 0-1 scale (the official baseline prints them x100) and computed in float64.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `float`): predicted similarity per pair (0-5 scale for KLUE-STS). A regression
        head's output of shape (N, 1) is accepted.
    references (`list` of `float`): gold similarity per pair (KLUE's `real-label` or `label`).
    threshold (`float`, default 3.0): a pair is positive ("paraphrased") when its score is >= threshold.
    confidence_level (`float`, optional): if given (e.g. 0.95), add paired bootstrap confidence intervals
        `pearson_ci`, `spearmanr_ci`, `f1_ci` (each `[low, high]`).
    n_resamples (`int`, default 1000): bootstrap resamples.
    seed (`int`, default 0): seed of the bootstrap generator (same seed, same intervals).
    ci_method (`str`, default "BCa"): "BCa", "percentile" or "basic" (scipy.stats.bootstrap's methods).
Returns:
    pearson (`float`): Pearson's r in [-1, 1]; NaN with a warning when predictions or references are constant.
    spearmanr (`float`): Spearman's rho in [-1, 1]; NaN likewise.
    f1 (`float`): F1 in [0, 1] of the positive class after binarising both sides at `threshold`.
    pearson_ci, spearmanr_ci, f1_ci (`list` of two `float`): only with `confidence_level`.
    signature (`str`): the threshold, the interval options and the version behind the numbers.

Example 1: scores of a model on four pairs
    >>> import evaluate
    >>> klue_sts = evaluate.load("metrics/klue_sts")
    >>> results = klue_sts.compute(predictions=[4.5, 0.5, 3.2, 1.0], references=[5.0, 0.0, 2.8, 1.4])
    >>> print({k: round(v, 4) for k, v in results.items() if k != "signature"})
    {'pearson': 0.9739, 'spearmanr': 1.0, 'f1': 0.6667}
    >>> results["signature"]
    'klue_sts|threshold:3|ci:none|version:0.1.0'

Example 2: batches added during evaluation, then a 90% confidence interval
    >>> klue_sts = evaluate.load("metrics/klue_sts")
    >>> for preds, refs in [([4.0, 1.0], [4.4, 0.6]), ([2.0, 3.5], [2.2, 3.0]), ([0.5, 4.9], [1.0, 4.8])]:
    ...     klue_sts.add_batch(predictions=preds, references=refs)
    >>> results = klue_sts.compute(confidence_level=0.9, n_resamples=200, seed=0)
    >>> round(results["pearson"], 4), results["f1"], results["f1_ci"]
    (0.9715, 1.0, [1.0, 1.0])
    >>> low, high = results["pearson_ci"]
    >>> bool(low <= results["pearson"] <= high)
    True

Example 3: the positive class needs score >= 3.0 on both sides
    >>> klue_sts = evaluate.load("metrics/klue_sts")
    >>> klue_sts.compute(predictions=[3.0, 2.99, 4.0], references=[3.0, 3.0, 1.0])["f1"]
    0.5
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class KlueSts(evaluate.Metric):
    """KLUE-STS Pearson r, Spearman rho and F1 (official KLUE baseline definitions, 0-1 scale)."""

    def _info(self):
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("float64"), "references": datasets.Value("float64")}
            ),
            codebase_urls=["https://github.com/KLUE-benchmark/KLUE-baseline"],
            reference_urls=["https://klue-benchmark.com/tasks/67/overview/description",
                            "https://arxiv.org/abs/2105.09680"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Validate a batch (finite numbers, equal lengths) before evaluate stores it."""
        if predictions is not None:
            predictions = as_scores(predictions, "predictions")
        if references is not None:
            references = as_scores(references, "references")
        if predictions is not None and references is not None and len(predictions) != len(references):
            raise ValueError(f"predictions and references differ in length: "
                             f"{len(predictions)} != {len(references)}")
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Validate one pair (finite numbers) before evaluate stores it."""
        if prediction is not None:
            prediction = float(as_scores([prediction], "prediction")[0])
        if reference is not None:
            reference = float(as_scores([reference], "reference")[0])
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def _compute(self, predictions, references, threshold=3.0, confidence_level=None, n_resamples=1000,
                 seed=0, ci_method="BCa"):
        return score(predictions, references, threshold=threshold, confidence_level=confidence_level,
                     n_resamples=n_resamples, seed=seed, ci_method=ci_method)
