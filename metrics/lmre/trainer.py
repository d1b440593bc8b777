"""``compute_metrics`` for a ``transformers`` token-classification phrase-break tagger.

The tagger predicts, for each word (eojeol), the boundary after it: NB, AP or IP (see ``formats``). As
usual for token classification, the word label sits on the word's first sub-token and every other
position (other sub-tokens, special tokens, padding) has label ``-100``. The factory turns the logits back
into annotation strings (argmax on the labelled positions), looks up each utterance's references and
scores them with LMRE; it also scores the same predictions against the gold labels alone (the
single-reference baseline).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .formats import LABELS, labels_to_annotation
from .lookup import references_for
from .scoring import DEFAULT_THETA, check_options, score

__all__ = ["make_compute_metrics", "decode_annotations"]


def _label_map(id2label: Mapping[int, str] | Sequence[str] | None) -> dict[int, str]:
    if id2label is None:
        id2label = LABELS
    items = id2label.items() if isinstance(id2label, Mapping) else enumerate(id2label)
    out = {}
    for k, v in items:
        name = str(v).upper()
        if name not in LABELS:
            raise ValueError(f"id2label[{k}] is {v!r}; phrase-break labels are {LABELS}")
        out[int(k)] = name
    return out


def decode_annotations(predictions: np.ndarray, label_ids: np.ndarray, words: Sequence[Sequence[str]],
                       id2label: Mapping[int, str] | Sequence[str] | None = None,
                       ignore_index: int = -100) -> tuple[list[str], list[str]]:
    """(predicted annotations, gold annotations) from logits ``(N, T, C)`` or label ids ``(N, T)``.

    Row ``i`` must have exactly ``len(words[i])`` positions whose label is not ``ignore_index`` (one per
    word); otherwise a ``ValueError`` names the row (e.g. the utterance was truncated by the tokenizer).
    """
    names = _label_map(id2label)
    preds = np.asarray(predictions)
    if preds.ndim == 3:
        preds = preds.argmax(-1)
    labels = np.asarray(label_ids)
    if preds.shape != labels.shape:
        raise ValueError(f"predictions have shape {preds.shape} but label_ids {labels.shape}")
    if len(labels) != len(words):
        raise ValueError(f"{len(labels)} evaluation rows but {len(words)} word lists; pass the words of the "
                         "evaluation dataset, in its order")
    hyps, golds = [], []
    for i in range(len(labels)):
        mask = labels[i] != ignore_index
        if int(mask.sum()) != len(words[i]):
            raise ValueError(f"row {i}: {int(mask.sum())} labelled positions for {len(words[i])} words; label the "
                             "first sub-token of every word (-100 elsewhere) and do not truncate utterances")
        try:
            hyps.append(labels_to_annotation(words[i], [names[int(c)] for c in preds[i][mask]],
                                             name=f"predictions[{i}]"))
            golds.append(labels_to_annotation(words[i], [names[int(c)] for c in labels[i][mask]],
                                              name=f"label_ids[{i}]"))
        except KeyError as e:
            raise ValueError(f"row {i}: label id {e.args[0]} is not in id2label {names}") from None
    return hyps, golds


def make_compute_metrics(words: Sequence[Sequence[str]],
                         references: Sequence[Sequence[str]] | Mapping[str, list[str]],
                         id2label: Mapping[int, str] | Sequence[str] | None = None,
                         similarity: str = "f1", theta: float = DEFAULT_THETA, break_types: str = "binary",
                         prefix: str = "lmre_") -> Callable[[Any], dict[str, float]]:
    """A ``compute_metrics(eval_pred)`` for ``Trainer`` scoring a phrase-break tagger with LMRE.

    Args:
        words: the words of each evaluation utterance, in the order of the evaluation dataset.
        references: each utterance's reference annotations (a list aligned with ``words``), or a lookup
            ``{utterance: [refs]}`` as returned by :func:`kometrics.lmre.load_references`.
        id2label: the model's label names by id (default ``("NB", "AP", "IP")``, e.g. ``model.config.id2label``).
        similarity, theta, break_types: as in the metric.

    Returns a function giving ``{prefix}acceptance_rate``, ``{prefix}mean_best_score``,
    ``{prefix}single_ref_acceptance_rate`` and ``{prefix}single_ref_mean_score`` (against the gold labels).
    """
    check_options(similarity, theta, break_types)
    _label_map(id2label)
    words = [list(w) for w in words]

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        predictions, label_ids = eval_pred[0], eval_pred[1]
        if isinstance(predictions, (tuple, list)):
            predictions = predictions[0]
        hyps, golds = decode_annotations(predictions, label_ids, words, id2label)
        refs = references_for(hyps, references) if isinstance(references, Mapping) else references
        if len(refs) != len(hyps):
            raise ValueError(f"{len(refs)} reference lists for {len(hyps)} evaluation rows")
        multi = score(hyps, refs, similarity, theta, break_types)
        single = score(hyps, [[g] for g in golds], similarity, theta, break_types)
        return {f"{prefix}acceptance_rate": multi["acceptance_rate"],
                f"{prefix}mean_best_score": multi["mean_best_score"],
                f"{prefix}single_ref_acceptance_rate": single["acceptance_rate"],
                f"{prefix}single_ref_mean_score": single["mean_best_score"]}

    return compute_metrics
