"""Known models: a folder prepared by ``kometrics models prepare`` is taken for the model it was made from (by
its marker, never by its config); the shipped Korean baseline files are complete bert_score tables that the
default lookup finds; the builder gives the same means in slices."""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

KORBERTSCORE = Path(__file__).resolve().parents[2] / "metrics" / "korbertscore"
GEMMA_CONFIG = {"model_type": "gemma3_text", "num_hidden_layers": 18, "hidden_size": 640, "vocab_size": 262144}


def _folder(path: Path, marker: dict | None = None, config: dict | None = None) -> str:
    from kometrics.korbertscore.embedding import PREPARED_MARKER

    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(config or GEMMA_CONFIG), encoding="utf-8")
    if marker is not None:
        (path / PREPARED_MARKER).write_text(json.dumps(marker), encoding="utf-8")
    return str(path)


def test_the_metric_folder_knows_what_prepare_writes():
    """The metric folder cannot import kometrics.models: its copies of the marker name and the source sha256
    must be the ones prepare() writes."""
    from kometrics.korbertscore.embedding import KNOWN_LAYERS, PREPARED_MARKER, PREPARED_SOURCES
    from kometrics.models.gemma import MARKER, MODELS

    assert PREPARED_MARKER == MARKER
    spec = MODELS["gemma-3-270m"]
    assert PREPARED_SOURCES[spec.sha256] == spec.hub_id
    assert KNOWN_LAYERS[spec.hub_id][1] == "measured"
    assert 0 <= KNOWN_LAYERS[spec.hub_id][0] <= 18


def test_known_model_by_name_and_by_marker(tmp_path):
    from kometrics.korbertscore.embedding import (
        KNOWN_LAYERS,
        PREPARED_SOURCES,
        default_layer,
        default_num_layers,
        known_model,
    )

    sha = next(iter(PREPARED_SOURCES))
    assert known_model("klue/bert-base") == "klue/bert-base"
    assert known_model("google/gemma-3-270m/") == "google/gemma-3-270m"
    assert known_model("no/such-model") is None and known_model(None) is None
    prepared = _folder(tmp_path / "prepared", {"name": "gemma-3-270m", "sha256": sha})
    assert known_model(prepared) == known_model(Path(prepared)) == "google/gemma-3-270m"
    layer = KNOWN_LAYERS["google/gemma-3-270m"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a recognised folder gets the measured layer without a warning
        assert default_num_layers(prepared, 18) == layer
    assert default_layer(prepared) == (layer, "google/gemma-3-270m: measured on KLUE-STS dev and KorSTS dev "
                                              "(see the card)")
    assert default_layer("google/gemma-3-270m")[1] == "measured on KLUE-STS dev and KorSTS dev (see the card)"
    # the same config without the marker (a fine-tune saved with save_pretrained), another source, a bad marker
    for path in (_folder(tmp_path / "fine-tune"), _folder(tmp_path / "other", {"sha256": "0" * 64}),
                 _folder(tmp_path / "list", ["not", "a", "dict"])):
        assert known_model(path) is None
        with pytest.warns(UserWarning, match="num_layers"):
            assert default_num_layers(path, 18) == 12
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "kometrics-model.json").write_text("{not json", encoding="utf-8")
    assert known_model(str(tmp_path / "broken")) is None
    # reports and plots name a prepared folder by its model, not by a path that exists only on this machine
    from kometrics.bench.paraphrase.benchmark import describe_model

    assert describe_model(prepared + "/") == "google/gemma-3-270m (prepared: prepared)"
    assert describe_model("klue/bert-base") == "klue/bert-base"
    assert describe_model(str(tmp_path / "fine-tune")) == str(tmp_path / "fine-tune")
    # signatures (korbertscore and perplexity share model_setup.py) name it the same on every machine
    from kometrics.korbertscore.model_setup import model_tag

    assert model_tag(prepared) == f"google/gemma-3-270m@prepared:{sha[:8]}"
    assert model_tag("klue/bert-base") == "klue/bert-base"
    assert model_tag(str(tmp_path / "fine-tune")) == str(tmp_path / "fine-tune")


@pytest.mark.parametrize("name", ["google/gemma-3-270m"])
def test_shipped_baseline_is_complete_and_found(name, tmp_path):
    from kometrics.korbertscore.embedding import KNOWN_LAYERS, PREPARED_SOURCES
    from kometrics.korbertscore.pipeline import _default_baseline
    from kometrics.korbertscore.scoring import read_baseline

    path = KORBERTSCORE / "baselines" / "ko" / f"{name}.tsv"
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["LAYER", "P", "R", "F"]
    assert [int(r[0]) for r in rows[1:]] == list(range(GEMMA_CONFIG["num_hidden_layers"] + 1))
    for r in rows[1:]:
        p, rec, f = map(float, r[1:])
        assert 0 < p < 1 and 0 < rec < 1 and 0 < f < 1
        assert f <= (p + rec) / 2 + 1e-8  # each pair's F1 (a harmonic mean) is at most the mean of its P and R
    sha = next(s for s, n in PREPARED_SOURCES.items() if n == name)
    assert Path(_default_baseline(name, "ko")) == path
    assert Path(_default_baseline(_folder(tmp_path / "prepared", {"sha256": sha}), "ko")) == path
    assert _default_baseline(_folder(tmp_path / "fine-tune"), "ko") is None
    assert _default_baseline(name, "en") is None
    layer = KNOWN_LAYERS[name][0]
    assert read_baseline(path, layer) == tuple(float(x) for x in rows[1 + layer][1:])


def test_baseline_built_in_slices_equals_one_call(tiny_bert, korean_texts):
    from kometrics.korbertscore.baseline import build_baseline, random_pairs
    from kometrics.korbertscore.pipeline import score_layers

    sliced = build_baseline(korean_texts, tiny_bert, n_pairs=60, seed=2, pairs_per_call=7)
    cands, refs = random_pairs(korean_texts, 60, seed=2)
    whole = score_layers(cands, refs, model_type=tiny_bert)
    assert sorted(sliced) == sorted(whole) == list(range(13))
    for layer, v in whole.items():
        expect = (np.mean(v["precision"]), np.mean(v["recall"]), np.mean(v["f1"]))
        np.testing.assert_allclose(sliced[layer], expect, atol=1e-6)  # float32 scores, other batches
    with pytest.raises(ValueError, match="pairs_per_call"):
        build_baseline(korean_texts, tiny_bert, n_pairs=4, pairs_per_call=0)
