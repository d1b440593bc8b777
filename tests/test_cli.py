"""The generic parts of the ``kometrics`` command: input files, options, errors, plugins."""

from __future__ import annotations

import json

import pytest

from kometrics.cli import _parse_options, build_parser, main, read_column


def test_read_column_formats(tmp_path):
    (tmp_path / "a.txt").write_text("첫 문장\n\n셋째 문장\n", encoding="utf-8")
    assert read_column(tmp_path / "a.txt", "predictions") == ["첫 문장", "", "셋째 문장"]
    (tmp_path / "b.jsonl").write_text('{"prediction": "가"}\n"나"\n["다", "라"]\n', encoding="utf-8")
    assert read_column(tmp_path / "b.jsonl", "predictions") == ["가", "나", ["다", "라"]]
    (tmp_path / "c.tsv").write_text('하나\n"둘\t셋\n', encoding="utf-8")  # a quote must not swallow the tab
    assert read_column(tmp_path / "c.tsv", "references") == ["하나", ['"둘', "셋"]]
    (tmp_path / "d.jsonl").write_text('{"other": 1}\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="d.jsonl:1: object has no 'predictions' key"):
        read_column(tmp_path / "d.jsonl", "predictions")
    (tmp_path / "e.jsonl").write_text("{bad\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="e.jsonl:1: not valid JSON"):
        read_column(tmp_path / "e.jsonl", "predictions")


def test_options_are_json_or_strings():
    opts = _parse_options(["--threshold", "3.5", "--idf", "--model-type", "klue/bert-base", "--layers=[1, 2]"])
    assert opts == {"threshold": 3.5, "idf": True, "model_type": "klue/bert-base", "layers": [1, 2]}
    with pytest.raises(SystemExit, match="unexpected argument"):
        _parse_options(["3.5"])


def test_score_errors_are_clear(tmp_path, capsys):
    (tmp_path / "p.txt").write_text("1.0\nabc\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("1.0\n2.0\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"predictions\[1\]: 'abc' is not a number"):
        main(["score", "klue_sts", "--predictions", str(tmp_path / "p.txt"), "--references", str(tmp_path / "r.txt")])
    with pytest.raises(SystemExit):
        main(["score", "no_such_metric", "--predictions", str(tmp_path / "p.txt")])
    assert "invalid choice" in capsys.readouterr().err


def test_score_writes_valid_json_with_nan_as_null(tmp_path, capsys):
    (tmp_path / "p.txt").write_text("2.0\n2.0\n2.0\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("1.0\n2.0\n4.0\n", encoding="utf-8")
    with pytest.warns(RuntimeWarning, match="constant"):
        main(["score", "klue_sts", "--predictions", str(tmp_path / "p.txt"), "--references", str(tmp_path / "r.txt")])
    assert json.loads(capsys.readouterr().out) == {"pearson": None, "spearmanr": None, "f1": 0.0,
                                                   "signature": "klue_sts|threshold:3|ci:none|version:0.1.0"}


def test_every_metric_is_scorable_and_plugins_load(capsys):
    from kometrics import METRICS

    parser, groups = build_parser()
    assert "could not load" not in capsys.readouterr().err, "a plugin's commands failed to import"
    score = groups["commands"].choices["score"]
    metric_action = next(a for a in score._actions if a.dest == "metric")
    assert set(metric_action.choices) == set(METRICS)
