"""The Trainer hook in a real ``Trainer.evaluate()``, and the Space answering through gradio_client."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from kometrics.datasets_scripts.readers import read_klue_sts


@pytest.fixture(scope="module")
def sts_eval(tiny_bert, data_dir):
    import datasets
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    records = read_klue_sts(data_dir)[:70]  # 70 pairs: 5 batches of 16, the last one partial
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    enc = tokenizer([r["sentence1"] for r in records], [r["sentence2"] for r in records], truncation=True,
                    max_length=96, padding="max_length")
    ds = datasets.Dataset.from_dict({**enc, "labels": [r["labels"]["real-label"] for r in records]})
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_bert, num_labels=1, problem_type="regression")
    return model, ds


def _trainer(model, ds, tmp_path, compute_metrics, batch_eval_metrics):
    from transformers import Trainer, TrainingArguments

    args = TrainingArguments(output_dir=str(tmp_path), per_device_eval_batch_size=16, report_to=[],
                             batch_eval_metrics=batch_eval_metrics, use_cpu=True, disable_tqdm=True)
    return Trainer(model=model, args=args, eval_dataset=ds, compute_metrics=compute_metrics)


@pytest.mark.parametrize("batch_eval_metrics", [False, True])
def test_trainer_evaluate_reports_klue_sts(sts_eval, tmp_path, batch_eval_metrics):
    from kometrics.klue_sts import compute_metrics, make_compute_metrics

    model, ds = sts_eval
    hook = make_compute_metrics() if batch_eval_metrics else compute_metrics
    trainer = _trainer(model, ds, tmp_path, hook, batch_eval_metrics)
    metrics = trainer.evaluate()
    # Independent reference: the raw predictions of the same model, scored with scipy and a hand F1.
    raw = _trainer(model, ds, tmp_path / "raw", None, False).predict(ds)
    preds = raw.predictions.reshape(-1).astype(np.float64)
    gold = np.asarray(ds["labels"], dtype=np.float64)
    assert raw.predictions.shape == (70, 1)
    assert metrics["eval_pearson"] == pytest.approx(stats.pearsonr(preds, gold)[0], abs=1e-6)
    assert metrics["eval_spearmanr"] == pytest.approx(stats.spearmanr(preds, gold)[0], abs=1e-6)
    tp = np.sum((preds >= 3) & (gold >= 3))
    denom = 2 * tp + np.sum((preds >= 3) & (gold < 3)) + np.sum((preds < 3) & (gold >= 3))
    assert metrics["eval_f1"] == pytest.approx(2 * tp / denom if denom else 0.0)
    if batch_eval_metrics:  # the accumulator was reset: a second evaluation gives the same numbers
        again = trainer.evaluate()
        assert again["eval_pearson"] == pytest.approx(metrics["eval_pearson"], abs=1e-12)


def test_batch_hook_accumulates_tensors():
    import torch
    from transformers import EvalPrediction

    from kometrics.klue_sts import make_compute_metrics, sts_scores

    hook = make_compute_metrics()
    rng = np.random.default_rng(1)
    preds, gold = rng.uniform(0, 5, 40), rng.uniform(0, 5, 40)
    outs = [hook(EvalPrediction(predictions=torch.tensor(preds[i:i + 16, None]), label_ids=torch.tensor(gold[i:i + 16])),
                 compute_result=i + 16 >= 40) for i in range(0, 40, 16)]
    assert outs[0] == {} and outs[1] == {}
    assert outs[2] == pytest.approx(sts_scores(preds, gold), abs=1e-6)


def test_space_answers_through_gradio_client():
    import pandas as pd

    from kometrics.klue_sts import score
    from tests.conftest import METRICS_DIR, serve_app

    with serve_app(METRICS_DIR / "klue_sts" / "app.py") as (_, client):
        table = pd.DataFrame({"prediction": [4.5, 0.5, 3.2, 1.0], "reference": [5.0, 0.0, 2.8, 1.4]})
        result = client.predict({"headers": list(table.columns), "data": table.values.tolist()}, 3.0, False,
                                api_name="/score")
    assert result == pytest.approx(score(table.prediction, table.reference))
