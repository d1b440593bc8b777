"""Every Trainer hook takes an ``EvalPrediction``, a ``(predictions, labels)`` tuple and a list (issue 14).

The transformers docs unpack ``logits, labels = eval_pred``, and users call hooks with plain tuples in their
own tests; the five hooks (``make_compute_metrics`` in each metric folder's ``trainer.py``) must give the same
numbers for all three forms, and those numbers must be the metric's on the same inputs.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

TEXTS = ["오늘은 날씨가 정말 좋네요.", "나는 밥을 먹고 학교에 갔다.", "비가 오면 길이 미끄럽다.", "동생이 새 자전거를 샀다."]
REFS = ["오늘은 날씨가 좋다.", "나는 밥을 먹고 학교로 갔다.", "비가 오면 길이 미끄러워진다.", "동생이 자전거를 샀다."]


def _factory(name: str):
    trainer = importlib.import_module(f"kometrics.{name}.trainer")
    # merge's factory may still be called compute_metrics_factory (being renamed to make_compute_metrics)
    return getattr(trainer, "make_compute_metrics", None) or trainer.compute_metrics_factory


def _ids(tokenizer, texts: list[str]) -> np.ndarray:
    """Token ids padded with -100 (what the Trainer gathers)."""
    rows = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
    width = max(len(r) for r in rows)
    return np.array([r + [-100] * (width - len(r)) for r in rows], dtype=np.int64)


def _klue_sts(tiny_bert, tiny_gpt2):
    from scipy import stats

    preds = np.array([[4.5], [0.5], [3.2], [1.0], [2.2]])  # a regression head's (N, 1)
    labels = np.array([5.0, 0.0, 2.8, 1.4, 2.0])
    expected = {"pearson": stats.pearsonr(preds[:, 0], labels)[0]}
    return _factory("klue_sts")(), preds, labels, expected


def _korbertscore(tiny_bert, tiny_gpt2):
    from transformers import AutoTokenizer

    from kometrics.korbertscore import score

    tok = AutoTokenizer.from_pretrained(tiny_bert)
    preds, labels = _ids(tok, TEXTS), _ids(tok, REFS)
    decoded = [tok.decode(r[r >= 0], skip_special_tokens=True).strip() for r in preds]
    gold = [tok.decode(r[r >= 0], skip_special_tokens=True).strip() for r in labels]
    res = score(decoded, gold, model_type=tiny_bert, num_layers=2)
    expected = {"korbertscore_f1": float(np.mean(res["f1"]))}
    return _factory("korbertscore")(tok, model_type=tiny_bert, num_layers=2), preds, labels, expected


def _perplexity(tiny_bert, tiny_gpt2):
    from transformers import AutoTokenizer

    from kometrics.perplexity import score

    tok = AutoTokenizer.from_pretrained(tiny_gpt2)
    preds = _ids(tok, TEXTS)
    decoded = [tok.decode(r[r >= 0]).strip() for r in preds]
    expected = {"corpus_perplexity": score(decoded, tiny_gpt2)["corpus_perplexity"]}
    return _factory("perplexity")(tok, tiny_gpt2, batch_size=2), preds, np.zeros_like(preds), expected


def _merge(tiny_bert, tiny_gpt2):
    seed_ids = ["a", "a", "a", "b", "b", "b"]
    is_seed = [True, False, False, True, False, False]
    labels = np.array([0, 0, 0, 2, 2, 2])
    logits = np.eye(3)[[0, 0, 1, 2, 2, 2]] * 5.0  # argmax: one variant of seed a is wrong
    # by hand: variant accuracy 3/4; seed a has 1/2 variants right, seed b 2/2 -> SV@1.0 = 1/2, SV@0.5 = 1
    expected = {"accuracy": 0.75, "seed_accuracy": 1.0, "sv_accuracy@1": 0.5, "sv_accuracy@0.5": 1.0}
    return _factory("merge_sv_accuracy")(seed_ids, is_seed, curve_points=[0.5, 1.0]), logits, labels, expected


def _lmre(tiny_bert, tiny_gpt2):
    words = [["오늘은", "날씨가", "좋다"], ["비가", "온다"]]
    refs = [["오늘은 / 날씨가 좋다", "오늘은 날씨가 // 좋다"], ["비가 온다"]]
    # positions: word labels on the first sub-token, -100 elsewhere; predicted codes AP NB IP / NB IP
    label_ids = np.array([[-100, 1, -100, 0, 2, -100], [-100, 0, 2, -100, -100, -100]])
    codes = np.array([[0, 1, 0, 0, 2, 0], [0, 1, 2, 0, 0, 0]])  # the second utterance: AP after '비가'
    logits = np.eye(3)[codes] * 3.0
    # by hand: utterance 1 matches reference 0 exactly (F1 1); utterance 2 has a boundary its only reference
    # lacks (F1 0); single reference = the gold labels: utterance 1 exact, utterance 2 F1 0
    expected = {"lmre_acceptance_rate": 0.5, "lmre_mean_best_score": 0.5, "lmre_single_ref_acceptance_rate": 0.5}
    return _factory("lmre")(words, refs), logits, label_ids, expected


SETUPS = {"klue_sts": _klue_sts, "korbertscore": _korbertscore, "perplexity": _perplexity,
          "merge_sv_accuracy": _merge, "lmre": _lmre}


@pytest.mark.parametrize("name", list(SETUPS))
def test_hook_takes_eval_prediction_tuple_and_list(name, tiny_bert, tiny_gpt2):
    from transformers import EvalPrediction

    hook, predictions, labels, expected = SETUPS[name](tiny_bert, tiny_gpt2)
    results = [hook(EvalPrediction(predictions=predictions, label_ids=labels)), hook((predictions, labels)),
               hook([predictions, labels])]
    assert results[0] == results[1] == results[2]
    for key, value in expected.items():
        assert math.isclose(results[0][key], value, rel_tol=1e-6), (key, results[0][key], value)


def test_hook_refuses_something_else():
    hook = _factory("klue_sts")()
    with pytest.raises(TypeError, match="EvalPrediction or a \\(predictions, labels\\) pair"):
        hook(np.array([1.0, 2.0]))
