"""evaluate's distributed mode: two processes each add half of the data; process 0 gets the full result."""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from kometrics.lmre import score

FOLDER = str(Path(__file__).resolve().parents[2] / "metrics" / "lmre")
PREDS = ["가 / 나 다", "가 나 / 다", "라 // 마", "바 사 / 아", "자 차"]
REFS = [["가 나 / 다", "가 / 나 다"], ["가 / 나 다"], ["라 마"], ["바 / 사 아", "바 사 / 아"], ["자 / 차"]]


def _worker(process_id: int, cache_dir: str):
    import os

    os.environ["HF_EVALUATE_OFFLINE"] = "1"
    import evaluate

    metric = evaluate.load(FOLDER, num_process=2, process_id=process_id, experiment_id="lmre-test", cache_dir=cache_dir)
    half = slice(0, 3) if process_id == 0 else slice(3, None)
    metric.add_batch(predictions=PREDS[half], references=REFS[half])
    return metric.compute(similarity="em", theta=0.5)


def test_two_processes_equal_one(tmp_path):
    with ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(_worker, pid, str(tmp_path)) for pid in (0, 1)]
        results = [f.result(timeout=300) for f in futures]
    assert results[1] is None  # only process 0 returns the result
    assert results[0] == score(PREDS, REFS, similarity="em", theta=0.5)
