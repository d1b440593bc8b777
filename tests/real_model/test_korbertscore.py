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
