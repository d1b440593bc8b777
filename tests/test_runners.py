"""The streaming runner itself (kometrics.runners.stream) with a toy scorer; the metrics' use of it, sharding
under ``accelerate launch`` included, is tested in tests/korbertscore and tests/perplexity."""

from __future__ import annotations

import json

import pytest

from kometrics.cli.io import iter_jsonl, read_jsonl
from kometrics.runners.stream import Processes, count_done, stream_jsonl


def _square(records):
    return [{"index": i, "square": rec["x"] ** 2} for i, rec in records]


def _write(path, values):
    path.write_text("".join(json.dumps(v) + "\n" if v is not None else "\n" for v in values), encoding="utf-8")


def test_stream_writes_one_line_per_record_in_order_and_resumes(tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(src, [{"x": k} if k != 4 else None for k in range(12)])  # a blank line is not a record
    calls = []

    def scorer(records):
        calls.append([i for i, _ in records])
        return _square(records)

    assert stream_jsonl(src, out, scorer, chunk_size=5) == 11
    assert calls == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10]]
    xs = [k for k in range(12) if k != 4]
    assert read_jsonl(out) == [{"index": i, "square": x * x} for i, x in enumerate(xs)]
    # a killed run: 6 full lines and half of the 7th; the rerun redoes the 7th onwards, once
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(lines[:6]) + lines[6][:5], encoding="utf-8")
    calls.clear()
    assert stream_jsonl(src, out, scorer, chunk_size=5) == 5
    assert calls == [[6, 7, 8, 9, 10]]
    assert read_jsonl(out) == [{"index": i, "square": x * x} for i, x in enumerate(xs)]
    assert stream_jsonl(src, out, scorer, chunk_size=5) == 0
    assert stream_jsonl(src, out, scorer, chunk_size=100, resume=False) == 11
    assert len(read_jsonl(out)) == 11


def test_count_done_cuts_a_partial_line(tmp_path):
    path = tmp_path / "o.jsonl"
    assert count_done(path) == 0
    path.write_text('{"a": 1}\n{"a": 2}\n{"a"', encoding="utf-8")
    assert count_done(path) == 2
    assert path.read_text(encoding="utf-8") == '{"a": 1}\n{"a": 2}\n'


def test_errors_name_the_records_and_lines(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('{"x": 1}\n\n{"x": 2}\n{"y": 3}\n', encoding="utf-8")
    with pytest.raises(KeyError):  # not a TypeError/ValueError: raised as it is
        stream_jsonl(src, tmp_path / "o.jsonl", _square, chunk_size=2)

    def strict(records):
        for i, rec in records:
            if "x" not in rec:
                raise ValueError(f"record {i} has no 'x'")
        return _square(records)

    with pytest.raises(ValueError, match=r"in\.jsonl: in the chunk of records 2\.\.2 \(lines 4-4\): record 2 has"):
        stream_jsonl(src, tmp_path / "o2.jsonl", strict, chunk_size=2)
    with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
        stream_jsonl(src, tmp_path / "o3.jsonl", strict, chunk_size=0)
    with pytest.raises(RuntimeError, match="returned 0 results for 2 items"):
        stream_jsonl(src, tmp_path / "o4.jsonl", lambda records: [], chunk_size=2)


def test_one_process_maps_everything_and_keeps_the_device():
    group = Processes()
    assert (group.count, group.rank, group.is_main) == (1, 0, True)
    assert group.map([3, 1, 2], lambda part: [x * 10 for x in part]) == [30, 10, 20]
    assert group.device(None) is None and group.device("cuda:1") == "cuda:1"
    assert group.broadcast(7) == 7


def test_the_jsonl_reader_names_bad_lines(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": 1}\n\n[1, 2]\n{oops\n', encoding="utf-8")
    lines = iter_jsonl(path)
    assert [next(lines), next(lines)] == [(1, {"a": 1}), (3, [1, 2])]
    with pytest.raises(ValueError, match=r"bad\.jsonl:4: not valid JSON"):
        read_jsonl(path)
    path.write_text('{"a": 1}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: each line must be a JSON object, got list"):
        read_jsonl(path, objects=True)
