"""KorBERTScore on Gemma-3-270M (a model with a final RMSNorm): layer L is the same in score and the sweep."""

from __future__ import annotations

import numpy as np
import pytest

from kometrics.korbertscore import load_encoder, score, score_layers

pytestmark = pytest.mark.real_model

TOL = 1e-5


def test_single_layer_equals_sweep(gemma, klue_pairs):
    cands, refs = klue_pairs
    enc = load_encoder(gemma)
    assert enc.depth == 18 and enc.final_norm is enc.model.norm and enc.one_pass_sweep
    sweep = score_layers(cands, refs, gemma)  # all 19 layers, one pass
    for layer in (0, 6, 14, 18):  # the last included
        one = score(cands, refs, model_type=gemma, num_layers=layer)
        for key in ("precision", "recall", "f1"):
            np.testing.assert_allclose(sweep[layer][key], one[key], atol=TOL, rtol=0, err_msg=f"{key}@{layer}")
    part = score_layers(cands, refs, gemma, layers=[3, 6])  # a sweep that stops below the last block
    np.testing.assert_allclose(part[6]["f1"], sweep[6]["f1"], atol=TOL, rtol=0)
    np.testing.assert_allclose(part[3]["f1"], sweep[3]["f1"], atol=TOL, rtol=0)


def test_final_norm_changes_gemma_scores(gemma, klue_pairs, monkeypatch):
    """Raw hidden_states[6] (no final norm, the old sweep) gives other scores than layer 6 of the metric."""
    cands, refs = klue_pairs
    enc = load_encoder(gemma)
    normed = score_layers(cands, refs, gemma, layers=[6, 7])[6]["f1"]
    monkeypatch.setattr(enc, "final_norm", None)
    raw = score_layers(cands, refs, gemma, layers=[6, 7])[6]["f1"]
    assert np.abs(raw - normed).max() > 0.01


def test_measured_layer_and_shipped_baseline(gemma, klue_pairs, data_dir):
    """The prepared folder gets the measured layer and the shipped baseline without being told; the baseline
    is this model's: rebuilt from 100 other random pairs of KorSTS train sentences (its source) it agrees
    within 0.01 at every layer (the shipped one averages 5,000 pairs)."""
    import csv
    import warnings
    from pathlib import Path

    from kometrics.datasets_scripts.readers import read_korsts
    from kometrics.korbertscore import KNOWN_LAYERS, default_layer, known_model
    from kometrics.korbertscore.baseline import build_baseline

    assert known_model(gemma) == "google/gemma-3-270m"
    layer = KNOWN_LAYERS["google/gemma-3-270m"][0]
    assert default_layer(gemma)[0] == layer
    cands, refs = klue_pairs
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "no known default layer" warning
        raw = score(cands, refs, model_type=gemma)
        rescaled = score(cands, refs, model_type=gemma, rescale_with_baseline=True)
    assert raw["num_layers"] == rescaled["num_layers"] == layer
    # signatures name the prepared model the same on every machine, and the shipped baseline as such
    assert raw["signature"].startswith(f"korbertscore|model:google/gemma-3-270m@prepared:a5fd3b62|layer:{layer}|")
    assert "|rescale:no|" in raw["signature"] and "|rescale:shipped|" in rescaled["signature"]
    assert raw["hashcode"].startswith(f"google/gemma-3-270m@prepared:a5fd3b62_L{layer}_no-idf")
    shipped = Path(__file__).resolve().parents[2] / "metrics" / "korbertscore" / "baselines" / "ko" / "google"
    with open(shipped / "gemma-3-270m.tsv", encoding="utf-8", newline="") as f:
        table = {int(r["LAYER"]): (float(r["P"]), float(r["R"]), float(r["F"])) for r in csv.DictReader(f)}
    for key, b in zip(("precision", "recall", "f1"), table[layer]):
        np.testing.assert_allclose(rescaled[key], (np.array(raw[key]) - b) / (1 - b), atol=1e-9)
    texts = [s for row in read_korsts("train", data_dir) for s in (row["sentence1"], row["sentence2"])]
    rebuilt = build_baseline(texts, gemma, n_pairs=100, seed=7)
    for x in range(19):
        np.testing.assert_allclose(rebuilt[x], table[x], atol=0.01, err_msg=f"layer {x}")
