"""The Trainer hook in a real ``Trainer.evaluate()`` of a tiny BERT NLI classifier on a MERGE set built by
MERE, and the Space answering through gradio_client."""

from __future__ import annotations

import numpy as np
import pytest

from kometrics.bench.merge_sv_accuracy import brute_force_sv_accuracy
from kometrics.merge_sv_accuracy import make_compute_metrics, seed_variant_accuracy

from ..conftest import METRICS_DIR


@pytest.fixture(scope="module")
def merge_eval(tiny_bert, tiny_merge_dir, tmp_path_factory):
    import datasets
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    out, _ = tiny_merge_dir
    ds = datasets.load_dataset(str(out), "all", split="test",
                               cache_dir=str(tmp_path_factory.mktemp("hf"))).to_dict()  # plain lists
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    enc = tokenizer(ds["premise"], ds["hypothesis"], truncation=True, max_length=128, padding="max_length")
    feats = datasets.Dataset.from_dict({**enc, "labels": ds["label"]})
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_bert, num_labels=3)
    assert not all(ds["is_seed"]), "the tiny MLM gave no variant"
    return model, feats, ds


def _trainer(model, ds, tmp_path, compute_metrics, batch_eval_metrics=False):
    from transformers import Trainer, TrainingArguments

    args = TrainingArguments(output_dir=str(tmp_path), per_device_eval_batch_size=16, report_to=[],
                             batch_eval_metrics=batch_eval_metrics, use_cpu=True, disable_tqdm=True)
    return Trainer(model=model, args=args, eval_dataset=ds, compute_metrics=compute_metrics)


@pytest.mark.parametrize("batch_eval_metrics", [False, True])
def test_trainer_evaluate_reports_merge_metrics(merge_eval, tmp_path, batch_eval_metrics):
    model, feats, ds = merge_eval
    hook = make_compute_metrics(ds["seed_id"], ds["is_seed"], ds["word_class"], curve_points=None)
    metrics = _trainer(model, feats, tmp_path, hook, batch_eval_metrics).evaluate()
    # Independent reference: the raw logits of the same model, argmax, scored by the brute-force loops of
    # kometrics.bench.merge_sv_accuracy (dicts and exact fractions, no code shared with the library), and
    # flattened here by the documented key names.
    raw = _trainer(model, feats, tmp_path / "raw", None).predict(feats)
    assert raw.predictions.shape == (len(ds["label"]), 3)
    preds = raw.predictions.argmax(-1)
    want = brute_force_sv_accuracy(preds.tolist(), ds["label"], ds["seed_id"], is_seed=ds["is_seed"],
                                   word_classes=ds["word_class"])
    flat = {k: want[k] for k in ("accuracy", "seed_accuracy", "matching_correctness",
                                 "variant_accuracy_given_seed_correct", "variant_accuracy_given_seed_wrong")
            if want.get(k) is not None}
    flat.update({f"sv_accuracy@{ct:g}": v for ct, v in want["sv_accuracy"].items()})
    flat.update({f"sv_accuracy_{cls}@{ct:g}": v for cls, curve in want["sv_accuracy_by_word_class"].items()
                 for ct, v in curve.items()})
    assert {k[len("eval_"):]: v for k, v in metrics.items()
            if k.startswith("eval_") and k[len("eval_"):] in flat} == pytest.approx(flat, abs=1e-12)
    assert not {k for k in metrics if k.startswith("eval_sv_accuracy")} - {f"eval_{k}" for k in flat}
    assert metrics["eval_accuracy"] == pytest.approx(
        float(np.mean(preds[~np.asarray(ds["is_seed"])] == np.asarray(ds["label"])[~np.asarray(ds["is_seed"])])))
    assert "eval_matching_correctness" in metrics and "eval_sv_accuracy@0.5" in metrics


def test_hook_checks_lengths_and_logs_curve_points():
    hook = make_compute_metrics(["a", "a", "b", "b"], [True, False, True, False], curve_points=[0.5, 1.0])
    logits = np.eye(3)[[0, 0, 1, 2]]
    out = hook((logits, np.array([0, 0, 1, 1])))
    assert out == {"accuracy": 0.5, "seed_accuracy": 1.0, "matching_correctness": 1.0,
                   "variant_accuracy_given_seed_correct": 0.5, "sv_accuracy@0.5": 0.5, "sv_accuracy@1": 0.5}
    with pytest.raises(ValueError, match="has 3 rows but make_compute_metrics was given 4 seed_ids"):
        hook((logits[:3], np.array([0, 0, 1])))
    with pytest.raises(ValueError, match=r"thresholds\[0\]"):
        make_compute_metrics(["a"], None, thresholds=[0])


def test_space_answers_through_gradio_client(tmp_path):
    import csv
    import io

    from gradio_client import handle_file

    from tests.conftest import load_app, serve_app

    app_path = METRICS_DIR / "merge_sv_accuracy" / "app.py"
    rows = list(csv.DictReader(io.StringIO(load_app(app_path).EXAMPLE)))
    want = seed_variant_accuracy([int(r["prediction"]) for r in rows], [int(r["label"]) for r in rows],
                                 [r["seed_id"] for r in rows], is_seed=[r["is_seed"] == "true" for r in rows],
                                 word_classes=[r["word_class"] for r in rows])
    with serve_app(app_path) as (app, client):
        plot, summary, result = client.predict(None, app.EXAMPLE, "", api_name="/score")
        assert result["matching_correctness"] == want["matching_correctness"]
        assert result["sv_accuracy"] == {str(k): v for k, v in want["sv_accuracy"].items()}
        assert f"MC = {want['matching_correctness']:.2f}" in summary
        assert plot is not None
        # an uploaded jsonl file, and a bad table answered with a readable error
        f = tmp_path / "preds.jsonl"
        f.write_text("\n".join(f'{{"seed_id": "{r["seed_id"]}", "label": {r["label"]}, '
                               f'"prediction": {r["prediction"]}}}' for r in rows), encoding="utf-8")
        _, _, result = client.predict(handle_file(str(f)), "", "0.5 1.0", api_name="/score")
        assert result["seed_accuracy"] is None and set(result["sv_accuracy"]) == {"0.5", "1.0"}
        with pytest.raises(Exception, match="label"):
            client.predict(None, "seed_id,prediction\na,1\n", "", api_name="/score")
