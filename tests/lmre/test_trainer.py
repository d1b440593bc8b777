"""``make_compute_metrics`` under a real ``Trainer.evaluate()`` of a tiny token-classification tagger."""

from __future__ import annotations

import numpy as np
import pytest

from kometrics.lmre import labels_to_annotation, make_compute_metrics, score
from kometrics.lmre.trainer import decode_annotations

ID2LABEL = {0: "NB", 1: "AP", 2: "IP"}
GOLD = [
    "오늘은 / 날씨가 정말 // 좋네요",
    "나는 / 밥을 먹고 // 학교에 갔다",
    "우리 집 고양이는 / 낮잠을 자주 잔다",
    "비가 오면 // 길이 미끄럽다",
    "그는 / 도서관에서 / 책을 빌렸다",
    "동생이 / 새 자전거를 샀다",
    "주말마다 / 공원에서 산책을 한다",
]


def _references(gold: str) -> list[str]:
    """The gold annotation and a variant without boundaries (a second valid phrasing, say)."""
    return [gold, " ".join(t for t in gold.split() if t not in ("/", "//"))]


def test_trainer_evaluate_with_lmre(tiny_bert, tmp_path):
    import torch
    from datasets import Dataset
    from transformers import (
        AutoModelForTokenClassification,
        AutoTokenizer,
        DataCollatorForTokenClassification,
        Trainer,
        TrainingArguments,
    )

    from kometrics.lmre import annotation_to_labels, parse_annotation

    tok = AutoTokenizer.from_pretrained(tiny_bert)
    torch.manual_seed(0)
    model = AutoModelForTokenClassification.from_pretrained(tiny_bert, num_labels=3, id2label=ID2LABEL,
                                                            label2id={v: k for k, v in ID2LABEL.items()})
    words = [list(parse_annotation(g).words) for g in GOLD]
    rows = []
    for w, g in zip(words, GOLD):
        enc = tok(w, is_split_into_words=True, truncation=True, max_length=64)
        label_of_word = [{"NB": 0, "AP": 1, "IP": 2}[x] for x in annotation_to_labels(g)]
        labels, previous = [], None
        for wid in enc.word_ids():
            labels.append(-100 if wid is None or wid == previous else label_of_word[wid])  # first sub-token only
            previous = wid
        rows.append({"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "labels": labels})
    dataset = Dataset.from_list(rows)
    refs = [_references(g) for g in GOLD]
    args = TrainingArguments(output_dir=str(tmp_path), per_device_eval_batch_size=3, report_to=[], use_cpu=True)
    trainer = Trainer(model=model, args=args, eval_dataset=dataset, data_collator=DataCollatorForTokenClassification(tok),
                      compute_metrics=make_compute_metrics(words, refs, id2label=model.config.id2label))
    metrics = trainer.evaluate()

    # independently: run the model on each utterance, read the first sub-token of each word via word_ids()
    model.eval()
    hyps = []
    with torch.no_grad():
        for w in words:
            enc = tok(w, is_split_into_words=True, truncation=True, max_length=64, return_tensors="pt")
            pred = model(**enc).logits[0].argmax(-1).tolist()
            first = {}
            for pos, wid in enumerate(enc.word_ids()):
                if wid is not None and wid not in first:
                    first[wid] = pred[pos]
            hyps.append(labels_to_annotation(w, [ID2LABEL[first[i]] for i in range(len(w))]))
    multi = score(hyps, refs)
    single = score(hyps, [[g] for g in GOLD])
    assert metrics["eval_lmre_acceptance_rate"] == pytest.approx(multi["acceptance_rate"])
    assert metrics["eval_lmre_mean_best_score"] == pytest.approx(multi["mean_best_score"])
    assert metrics["eval_lmre_single_ref_acceptance_rate"] == pytest.approx(single["acceptance_rate"])
    assert metrics["eval_lmre_single_ref_mean_score"] == pytest.approx(single["mean_best_score"])

    # a lookup {utterance: refs} (what load_references returns) gives the same numbers
    lookup = {" ".join(w): r for w, r in zip(words, refs)}
    output = trainer.predict(dataset)
    by_lookup = make_compute_metrics(words, lookup, id2label=model.config.id2label)((output.predictions,
                                                                                     output.label_ids))
    assert by_lookup == {k[len("eval_"):]: v for k, v in metrics.items() if k.startswith("eval_lmre_")}


def test_decode_checks_rows():
    words = [["가", "나", "다"]]
    logits = np.zeros((1, 5, 3))
    logits[0, 1, 1] = logits[0, 2, 0] = logits[0, 3, 2] = 1.0
    labels = np.array([[-100, 1, 0, 0, -100]])
    hyps, golds = decode_annotations(logits, labels, words, ID2LABEL)
    assert hyps == ["가 / 나 다"] and golds == ["가 / 나 다"]
    with pytest.raises(ValueError, match="row 0: 2 labelled positions for 3 words"):
        decode_annotations(logits, np.array([[-100, 1, 0, -100, -100]]), words, ID2LABEL)
    with pytest.raises(ValueError, match="1 evaluation rows but 2 word lists"):
        decode_annotations(logits, labels, words * 2, ID2LABEL)
    with pytest.raises(ValueError, match="phrase-break labels"):
        make_compute_metrics(words, [["가 나 다"]], id2label={0: "O", 1: "B", 2: "I"})
