"""The generic parts of the ``kometrics`` command: input files, options, errors, plugins."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kometrics.cli import UsageError, _parse_options, build_parser, main, read_column, read_lines

from .conftest import REPO


def test_read_column_formats(tmp_path):
    (tmp_path / "a.txt").write_text("첫 문장\n\n셋째 문장\n", encoding="utf-8")
    assert read_column(tmp_path / "a.txt", "predictions") == ["첫 문장", "", "셋째 문장"]
    (tmp_path / "b.jsonl").write_text('{"prediction": "가"}\n"나"\n["다", "라"]\n', encoding="utf-8")
    assert read_column(tmp_path / "b.jsonl", "predictions") == ["가", "나", ["다", "라"]]
    (tmp_path / "c.tsv").write_text('하나\n"둘\t셋\n', encoding="utf-8")  # a quote must not swallow the tab
    assert read_column(tmp_path / "c.tsv", "references") == ["하나", ['"둘', "셋"]]
    (tmp_path / "d.jsonl").write_text('{"other": 1}\n', encoding="utf-8")
    with pytest.raises(UsageError, match="d.jsonl:1: object has no 'predictions' key"):
        read_column(tmp_path / "d.jsonl", "predictions")
    (tmp_path / "e.jsonl").write_text("{bad\n", encoding="utf-8")
    with pytest.raises(UsageError, match="e.jsonl:1: not valid JSON"):
        read_column(tmp_path / "e.jsonl", "predictions")


def test_options_are_json_or_strings():
    opts = _parse_options(["--threshold", "3.5", "--idf", "--model-type", "klue/bert-base", "--layers=[1, 2]"])
    assert opts == {"threshold": 3.5, "idf": True, "model_type": "klue/bert-base", "layers": [1, 2]}
    with pytest.raises(UsageError, match="unexpected argument"):
        _parse_options(["3.5"])


def test_options_checked_against_the_metric():
    import inspect

    def _compute(self, predictions, threshold=3.0, idf=False, confidence_level=None):
        pass

    params = {k: p for k, p in inspect.signature(_compute).parameters.items() if k not in ("self", "predictions")}
    assert _parse_options(["--idf", "--threshold=2"], params) == {"idf": True, "threshold": 2}
    assert _parse_options(["--model-type=klue/bert-base"]) == {"model_type": "klue/bert-base"}
    with pytest.raises(UsageError, match="option --confidence_level needs a value"):
        _parse_options(["--confidence_level"], params)
    with pytest.raises(UsageError, match="option --confidence_level needs a value"):
        _parse_options(["--confidence-level", "--idf"], params)
    with pytest.raises(UsageError, match="unknown option --thresh for the metric; it takes --threshold"):
        _parse_options(["--thresh", "2"], params)


def test_read_lines_bom_and_line_ends(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes("\ufeff가\x0c나\r\n다\u2028라\n\n마\r끝\n".encode("utf-8"))
    # the BOM is not data; only \n and \r\n end lines (a form feed, U+2028 or a lone \r stay in the text)
    assert read_lines(path) == ["가\x0c나", "다\u2028라", "", "마\r끝"]
    path.write_bytes(b"\xef\xbb\xbf")
    assert read_lines(path) == []
    path.write_bytes("하나\n둘".encode())  # no final line end
    assert read_lines(path) == ["하나", "둘"]
    path.write_bytes("가\n".encode() + b"\xff\n")
    with pytest.raises(UsageError, match=r"--x .*a.txt:2: not UTF-8"):
        read_lines(path, "--x")


def test_bom_is_not_data_in_score(tmp_path, capsys):
    """Issue 14: a seed-id file saved with a BOM gave 3 seeds instead of 2 and SV@1.0 0.667 instead of 0.5."""
    (tmp_path / "p.txt").write_text("0\n1\n0\n0\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("0\r\n0\r\n0\r\n0\r\n", encoding="utf-8")
    (tmp_path / "ids.txt").write_text("a\na\nb\nb\n", encoding="utf-8-sig")
    assert (tmp_path / "ids.txt").read_bytes().startswith(b"\xef\xbb\xbf")
    assert main(["score", "merge_sv_accuracy", "--predictions", str(tmp_path / "p.txt"), "--references",
                 str(tmp_path / "r.txt"), "--input", f"seed_ids={tmp_path / 'ids.txt'}", "--thresholds", "[1.0]"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_seeds"] == 2 and out["sv_accuracy"] == {"1.0": 0.5}


def _user_error(tmp_path, name: str) -> list[str]:
    """The argv of one user error, with the files it needs written into ``tmp_path``."""
    def w(file: str, text: str) -> str:
        (tmp_path / file).write_text(text, encoding="utf-8")
        return str(tmp_path / file)

    p, r = w("p.txt", "1.0\n2.0\n3.5\n"), w("r.txt", "1.5\n2.0\n3.0\n")
    sts = ["score", "klue_sts", "--predictions", p, "--references", r]
    return {
        "missing file": ["score", "klue_sts", "--predictions", str(tmp_path / "none.txt"), "--references", r],
        "directory": ["score", "klue_sts", "--predictions", str(tmp_path), "--references", r],
        "empty file": ["score", "klue_sts", "--predictions", w("e.txt", ""), "--references", r],
        "lengths differ": ["score", "klue_sts", "--predictions", p, "--references", w("r2.txt", "1.0\n2.0\n")],
        "nan": ["score", "klue_sts", "--predictions", w("n.txt", "1.0\nnan\n3.0\n"), "--references", r],
        "not a number": ["score", "klue_sts", "--predictions", w("x.txt", "1.0\nabc\n3.0\n"), "--references", r],
        "unknown option": [*sts, "--treshold", "2.5"],
        "option without value": [*sts, "--confidence_level"],
        "missing references": ["score", "klue_sts", "--predictions", p],
        "missing model_id": ["score", "perplexity", "--predictions", w("t.txt", "오늘은 맑다.\n")],
        "input not taken": ["score", "perplexity", "--predictions", w("t.txt", "오늘은 맑다.\n"), "--references", r,
                            "--model_id", "m"],
        "bad --input": ["score", "merge_sv_accuracy", "--predictions", p, "--references", r, "--input", "seed_ids"],
        "missing API key variable": ["lmre", "build", "--utterances", w("u.txt", "가 나\n"), "--pool",
                                     w("pool.txt", "가 / 나\n"), "--out", str(tmp_path / "out"), "--llm", "openai",
                                     "--model", "m", "--api-key-env", "KOMETRICS_TEST_NO_SUCH_KEY"],
        "unknown sub-command option": ["demo", "--bogus"],
    }[name]


USER_ERRORS = {
    "missing file": r"--predictions \S*none.txt: no such file",
    "directory": r"--predictions \S+: is a directory",
    "empty file": r"--predictions \S*e.txt: the file is empty",
    "lengths differ": r"differ in length: --predictions \S*p.txt has 3 item\(s\), --references \S*r2.txt has 2",
    "nan": r"predictions\[1\] is nan",
    "not a number": r"--predictions \S*x.txt: predictions\[1\]: 'abc' is not a number",
    "unknown option": r"unknown option --treshold for klue_sts; it takes --threshold",
    "option without value": r"option --confidence_level needs a value",
    "missing references": r"klue_sts needs --references FILE",
    "missing model_id": r"perplexity needs --model_id VALUE",
    "input not taken": r"perplexity takes no --references; it takes predictions",
    "bad --input": r"--input takes NAME=FILE, got 'seed_ids'",
    "missing API key variable": r"KOMETRICS_TEST_NO_SUCH_KEY",
    "unknown sub-command option": r"unrecognized arguments: --bogus",
}


@pytest.mark.parametrize("name", list(USER_ERRORS))
def test_user_errors_are_one_line_with_status_2(name, tmp_path, capsys, monkeypatch):
    import re

    monkeypatch.delenv("KOMETRICS_TEST_NO_SUCH_KEY", raising=False)
    argv = _user_error(tmp_path, name)
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own errors exit
        code = e.code
    captured = capsys.readouterr()
    assert code == 2, captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert re.search(USER_ERRORS[name], lines[0]), lines[0]
    assert captured.out == ""


def test_user_error_in_a_real_process_and_debug_traceback(tmp_path):
    argv = _user_error(tmp_path, "lengths differ")
    plain = subprocess.run([sys.executable, "-m", "kometrics.cli", *argv], capture_output=True, text=True, cwd=REPO)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    assert plain.stderr.startswith("kometrics: error: the inputs differ in length")
    debug = subprocess.run([sys.executable, "-m", "kometrics.cli", *argv, "--debug"], capture_output=True,
                           text=True, cwd=REPO)
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "UsageError" in debug.stderr


def test_unknown_metric_is_refused(tmp_path, capsys):
    (tmp_path / "p.txt").write_text("1.0\n", encoding="utf-8")
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
