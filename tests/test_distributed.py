"""Every metric in evaluate's distributed mode (``num_process``, ``process_id``, ``experiment_id``).

For each metric folder present, two processes load the metric with ``num_process=2``, ``process_id=i``, the
same ``experiment_id`` and ``cache_dir``, and each ``add_batch``-es its half of the data (process 0 the
first half, process 1 the second, each in two batches). Process 0's ``compute`` gathers both halves through evaluate's Arrow
cache files and file locks; its result must equal a single-process ``compute`` over all the data, process
1 must return None. A third process computes the single-process result, so all three run with the same
thread settings.

Inputs are real Korean text from ../shared/data (KLUE-STS dev, KorSTS dev, KLUE-DP dev) and, for the
model-based metrics, the tiny random local models. Options are chosen so that a wrong gather would show:
idf weights over *all* references (korbertscore), seeds whose rows are split between the two processes
(merge_sv_accuracy), per-item lists whose length and order must survive the gather.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from .conftest import METRICS_DIR

_WORKER = r'''
import json, sys, traceback, warnings
warnings.simplefilter("ignore")
import evaluate

spec = json.load(open(sys.argv[1], encoding="utf-8"))
role = sys.argv[2]  # "0", "1" or "single"
out = {}
for case in spec["cases"]:
    name, inputs, kwargs = case["name"], case["inputs"], case["kwargs"]
    try:
        if role == "single":
            metric = evaluate.load(case["folder"], cache_dir=spec["cache_dir"] + "-single",
                                   experiment_id=case["experiment_id"] + "-single")
            metric.add_batch(**inputs)
        else:
            i = int(role)
            n = len(inputs["predictions"])
            lo, hi = (0, n // 2) if i == 0 else (n // 2, n)
            metric = evaluate.load(case["folder"], num_process=2, process_id=i, cache_dir=spec["cache_dir"],
                                   experiment_id=case["experiment_id"], timeout=120)
            mid = (lo + hi) // 2  # each process adds its half in two batches, as an evaluation loop would
            for a, b in ((lo, mid), (mid, hi)):
                metric.add_batch(**{k: v[a:b] for k, v in inputs.items()})
        result = metric.compute(**kwargs)
        out[name] = {"ok": True, "result": result}
    except Exception:
        out[name] = {"ok": False, "error": traceback.format_exc()[-3000:]}


def plain(x):
    import numpy as np
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return plain(x.tolist())
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float) and x != x:
        return "NaN"
    return x


json.dump(plain(out), open(sys.argv[3], "w", encoding="utf-8"), ensure_ascii=False)
'''


def _klue_sts(data_dir, models):
    from kometrics.datasets_scripts.readers import read_klue_sts

    rows = read_klue_sts(data_dir)[:120]
    rng = random.Random(0)
    refs = [r["labels"]["real-label"] for r in rows]
    preds = [min(5.0, max(0.0, y + rng.gauss(0, 0.8))) for y in refs]
    return {"predictions": preds, "references": refs}, {"threshold": 3.0}


def _korbertscore(data_dir, models):
    from kometrics.datasets_scripts.readers import read_korsts

    rows = read_korsts("dev", data_dir)[:16]
    preds = [r["sentence1"] for r in rows]
    # two references per prediction: the pair's sentence and the next pair's (a distractor)
    refs = [[r["sentence2"], rows[(i + 1) % len(rows)]["sentence2"]] for i, r in enumerate(rows)]
    return ({"predictions": preds, "references": refs},
            {"model_type": models["tiny_bert"], "num_layers": 4, "idf": True, "batch_size": 8})


def _perplexity(data_dir, models):
    from kometrics.datasets_scripts.readers import read_klue_ner_sentences

    texts = read_klue_ner_sentences(data_dir)[:12]
    return {"predictions": texts}, {"model_id": models["tiny_gpt2"], "batch_size": 4}


def _merge_sv_accuracy(data_dir, models):
    rng = random.Random(1)
    rows = {k: [] for k in ("predictions", "references", "seed_ids", "is_seed", "word_classes")}
    for s in range(25):
        label = rng.randrange(3)
        for v in range(1 + rng.randint(2, 5)):  # the seed row, then its variants
            right = rng.random() < 0.75
            rows["predictions"].append(label if right else (label + 1 + rng.randrange(2)) % 3)
            rows["references"].append(label)
            rows["seed_ids"].append(f"seed-{s}")
            rows["is_seed"].append(v == 0)
            rows["word_classes"].append("" if v == 0 else rng.choice(["NNG", "VV", "VA", "MAG"]))
    return rows, {}


def _annotation(words: list[str], rng: random.Random) -> str:
    parts = [words[0]]
    for w in words[1:]:
        parts += [t for t in (rng.choice(["", "", "/", "//"]),) if t] + [w]
    return " ".join(parts)


def _lmre(data_dir, models):
    from kometrics.datasets_scripts.readers import read_klue_dp

    rng = random.Random(2)
    sentences = [[w.form for w in s.words] for s in read_klue_dp(data_dir)[:200]]
    sentences = [w for w in sentences if 3 <= len(w) <= 12 and not any("/" in x for x in w)][:40]
    preds = [_annotation(w, rng) for w in sentences]
    refs = [[_annotation(w, rng) for _ in range(3)] for w in sentences]
    return {"predictions": preds, "references": refs}, {"similarity": "f1", "theta": 0.5, "break_types": "typed"}


#: name -> builder of (inputs, compute kwargs), one per metric.
CASES = {
    "klue_sts": _klue_sts,
    "korbertscore": _korbertscore,
    "perplexity": _perplexity,
    "merge_sv_accuracy": _merge_sv_accuracy,
    "lmre": _lmre,
}


def test_every_metric_has_a_case():
    from kometrics import METRICS

    assert set(CASES) == set(METRICS)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, data_dir, tiny_bert, tiny_gpt2):
    """Run the two distributed processes and the single-process one over every metric."""
    tmp = tmp_path_factory.mktemp("distributed")
    models = {"tiny_bert": tiny_bert, "tiny_gpt2": tiny_gpt2}
    cases = []
    for name in CASES:
        inputs, kwargs = CASES[name](data_dir, models)
        cases.append({"name": name, "folder": str(METRICS_DIR / name), "inputs": inputs, "kwargs": kwargs,
                      "experiment_id": f"{name}-{uuid.uuid4().hex}"})
    spec = tmp / "spec.json"
    spec.write_text(json.dumps({"cases": cases, "cache_dir": str(tmp / "cache")}, ensure_ascii=False),
                    encoding="utf-8")
    worker = tmp / "worker.py"
    worker.write_text(_WORKER, encoding="utf-8")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    procs = {role: subprocess.Popen([sys.executable, str(worker), str(spec), role, str(tmp / f"{role}.json")],
                                    cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for role in ("0", "1", "single")}
    outputs = {}
    for role, proc in procs.items():
        log, _ = proc.communicate(timeout=900)
        assert proc.returncode == 0, f"process {role} failed:\n{log[-4000:]}"
        outputs[role] = json.loads((tmp / f"{role}.json").read_text(encoding="utf-8"))
    return {"cases": {c["name"]: c for c in cases}, **outputs}


def _assert_same(a, b, path="result"):
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), f"{path}: {a!r} vs {b!r}"
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f"{path}: {a!r} != {b!r}"
    elif isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), f"{path}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            _assert_same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def _per_item_lists(result: dict, n: int) -> list[str]:
    return [k for k, v in result.items() if isinstance(v, list) and len(v) == n]


@pytest.mark.parametrize("name", list(CASES))
def test_two_processes_equal_one(name, runs):
    zero, one, single = runs["0"][name], runs["1"][name], runs["single"][name]
    assert single["ok"], single.get("error")
    assert zero["ok"], zero.get("error")
    assert one["ok"], one.get("error")
    assert one["result"] is None, "process 1 must return None (process 0 gathers)"
    assert isinstance(zero["result"], dict) and zero["result"]
    _assert_same(zero["result"], single["result"])
    n = len(runs["cases"][name]["inputs"]["predictions"])
    # Per-item outputs (when the metric has them) cover both halves, in order.
    for key in _per_item_lists(single["result"], n):
        assert len(zero["result"][key]) == n, key


def test_halves_alone_differ_from_the_whole(runs):
    """The check has teeth: scoring only process 0's half gives another result for the aggregate metrics."""
    import evaluate

    name = "klue_sts"
    case = runs["cases"][name]
    half = len(case["inputs"]["predictions"]) // 2
    alone = evaluate.load(str(Path(case["folder"]))).compute(
        **{k: v[:half] for k, v in case["inputs"].items()}, **case["kwargs"])
    assert not math.isclose(alone["pearson"], runs["0"][name]["result"]["pearson"], rel_tol=1e-6)
