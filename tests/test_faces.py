"""One face per metric: ``kometrics.<name>.score`` gives what ``evaluate.load(...).compute`` gives, a Trainer hook
factory ``make_compute_metrics``, a ``signature`` in every result (metric, every option that changes the
number, version), and one version everywhere."""

from __future__ import annotations

import importlib
import re
import warnings

import pytest

import kometrics
from kometrics import METRICS

from .conftest import METRICS_DIR, REPO


def _cases(tiny_bert: str, tiny_gpt2: str) -> dict[str, tuple[dict, dict]]:
    """name -> (inputs, options) of a small real case."""
    return {
        "klue_sts": ({"predictions": [4.5, 0.5, 3.2, 1.0], "references": [5.0, 0.0, 2.8, 1.4]},
                     {"threshold": 2.5}),
        "korbertscore": ({"predictions": ["오늘은 날씨가 맑다.", "회의는 내일 열린다."],
                          "references": [["오늘 날씨 맑음", "비"], ["회의가 내일 있다."]]},
                         {"model_type": tiny_bert, "num_layers": 4, "idf": True}),
        "perplexity": ({"predictions": ["오늘은 날씨가 맑다.", "한국어 문장을 평가합니다."]},
                       {"model_id": tiny_gpt2, "batch_size": 2}),
        "merge_sv_accuracy": ({"predictions": [0, 0, 1, 2, 2], "references": [0, 0, 0, 2, 2],
                               "seed_ids": ["a", "a", "a", "b", "b"], "is_seed": [True, False, False, True, False]},
                              {"thresholds": [0.5, 1.0]}),
        "lmre": ({"predictions": ["가 / 나 다", "라 // 마"], "references": [["가 나 / 다", "가 / 나 다"], ["라 / 마"]]},
                 {"theta": 0.4, "break_types": "typed"}),
    }


def test_one_version():
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^version = "([^"]+)"$', pyproject, re.M).group(1) == kometrics.__version__
    for name in METRICS:
        assert importlib.import_module(f"kometrics.{name}").VERSION == kometrics.__version__, name


@pytest.mark.parametrize("name", METRICS)
def test_score_is_compute_and_signs_its_result(name, tiny_bert, tiny_gpt2):
    import evaluate

    inputs, options = _cases(tiny_bert, tiny_gpt2)[name]
    lib = importlib.import_module(f"kometrics.{name}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = lib.score(**inputs, **options)
        theirs = evaluate.load(str(METRICS_DIR / name)).compute(**inputs, **options)
    assert ours == theirs
    assert ours["signature"].startswith(f"{name}|") and ours["signature"].endswith(f"|version:{kometrics.__version__}")


@pytest.mark.parametrize("name", METRICS)
def test_every_metric_has_a_trainer_hook_factory(name):
    lib = importlib.import_module(f"kometrics.{name}")
    assert callable(lib.make_compute_metrics)
    assert "make_compute_metrics" in lib.__all__ and "score" in lib.__all__


def test_former_names_are_aliases():
    from kometrics import klue_sts, merge_sv_accuracy

    assert klue_sts.klue_sts_scores is klue_sts.score
    assert merge_sv_accuracy.seed_variant_accuracy is merge_sv_accuracy.score
    assert merge_sv_accuracy.compute_metrics_factory is merge_sv_accuracy.make_compute_metrics
    assert isinstance(klue_sts.compute_metrics, klue_sts.STSComputeMetrics)  # ready, no argument needed


def _options_in(signature: str) -> dict[str, str]:
    return dict(part.split(":", 1) for part in signature.split("|")[1:])


@pytest.mark.parametrize("name, option, values, key", [
    ("klue_sts", "threshold", [3.0, 2.5], "threshold"),
    ("klue_sts", "confidence_level", [None, 0.9], "ci"),
    ("korbertscore", "num_layers", [4, 6], "layer"),
    ("korbertscore", "idf", [False, True], "idf"),
    ("korbertscore", "exclude_special_tokens", [False, True], "special"),
    ("korbertscore", "long_text", ["window", "truncate"], "long"),
    ("korbertscore", "max_length", [None, 64], "max_len"),
    ("korbertscore", "dtype", [None, "float64"], "dtype"),
    ("perplexity", "max_length", [None, 16], "window"),
    ("perplexity", "add_start_token", [True, False], "start"),
    ("perplexity", "dtype", [None, "float64"], "dtype"),
    ("merge_sv_accuracy", "thresholds", [[0.5, 1.0], None], "ct"),
    ("lmre", "theta", [0.4, 0.6], "theta"),
    ("lmre", "similarity", ["f1", "em"], "sim"),
    ("lmre", "break_types", ["binary", "typed"], "breaks"),
])
def test_the_signature_names_every_option_that_changes_the_number(name, option, values, key, tiny_bert, tiny_gpt2):
    inputs, options = _cases(tiny_bert, tiny_gpt2)[name]
    lib = importlib.import_module(f"kometrics.{name}")
    sigs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for value in values:
            sigs.append(lib.score(**inputs, **{**options, option: value})["signature"])
    first, second = (_options_in(s) for s in sigs)
    assert first[key] != second[key], sigs


def test_korbertscore_keeps_the_bert_score_hashcode(tiny_bert):
    from kometrics.korbertscore import score

    r = score(["오늘은 맑다."], ["오늘 맑음"], model_type=tiny_bert, num_layers=4, idf=False)
    assert re.fullmatch(rf"{re.escape(tiny_bert)}_L4_no-idf_version=korbertscore-{kometrics.__version__}\(hug_trans=.+\)",
                        r["hashcode"])
