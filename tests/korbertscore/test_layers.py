"""Layer L means the same thing in score(num_layers=L), score_layers, the baseline builder and the plots,
also for models that normalise after their last block (GPT-2's ln_f, Llama's norm): the encoder's output when
only its first L blocks run. Checked on tiny causal LMs used as encoders, on real KorSTS pairs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from kometrics.korbertscore import clear_cache, load_encoder, score, score_layers, similarity_matrix
from kometrics.korbertscore import embedding as emb_mod

TOL = 1e-5


@pytest.fixture(params=["tiny_gpt2", "tiny_llama"])
def final_norm_model(request) -> str:
    return request.getfixturevalue(request.param)


def _single(cands, refs, model, layer):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return score(cands, refs, model_type=model, num_layers=layer, batch_size=7)


def _assert_same(sweep_layer, single):
    for key in ("precision", "recall", "f1"):
        np.testing.assert_allclose(sweep_layer[key], single[key], atol=TOL, rtol=0, err_msg=key)


def test_final_norm_found_for_causal_lms(tiny_gpt2, tiny_llama, tiny_bert):
    gpt2, llama, bert = load_encoder(tiny_gpt2), load_encoder(tiny_llama), load_encoder(tiny_bert)
    assert gpt2.depth == 2 and gpt2.final_norm is gpt2.model.ln_f and gpt2.one_pass_sweep
    assert llama.depth == 6 and llama.final_norm is llama.model.norm and llama.one_pass_sweep
    assert bert.final_norm is None and bert.one_pass_sweep  # BERT: hidden_states[L] is the cut output


def test_single_layer_equals_sweep_for_final_norm_models(final_norm_model, korsts_pairs):
    cands, refs, _ = korsts_pairs
    cands, refs = cands[:40], refs[:40]
    depth = load_encoder(final_norm_model).depth
    sweep = score_layers(cands, refs, final_norm_model, batch_size=9)
    assert sorted(sweep) == list(range(depth + 1))
    for layer in range(depth + 1):  # every layer, the last included
        _assert_same(sweep[layer], _single(cands, refs, final_norm_model, layer))
    # A sweep whose deepest layer is below the last block: that layer is the pass's output, the others normed.
    part = score_layers(cands, refs, final_norm_model, layers=[0, depth - 1])
    for layer in (0, depth - 1):
        _assert_same(part[layer], sweep[layer])


def test_raw_hidden_states_would_differ(final_norm_model, korsts_pairs, monkeypatch):
    """The check above can fail: without the final norm the sweep gives other numbers below the last layer
    (the bug this definition fixes), and the same at the last layer (transformers normalises that one)."""
    cands, refs, _ = korsts_pairs
    enc = load_encoder(final_norm_model)
    depth = enc.depth
    normed = score_layers(cands[:30], refs[:30], final_norm_model)
    monkeypatch.setattr(enc, "final_norm", None)
    raw = score_layers(cands[:30], refs[:30], final_norm_model)
    below = max(float(np.abs(raw[layer]["f1"] - normed[layer]["f1"]).max()) for layer in range(depth))
    assert below > 1e-3
    np.testing.assert_allclose(raw[depth]["f1"], normed[depth]["f1"], atol=TOL)


def test_unknown_final_module_sweeps_one_pass_per_layer(tiny_gpt2, korsts_pairs, monkeypatch):
    cands, refs, _ = korsts_pairs
    monkeypatch.setattr(emb_mod, "FINAL_NORMS", ())
    clear_cache()
    try:
        with pytest.warns(UserWarning, match="one forward pass per layer"):
            enc = load_encoder(tiny_gpt2)
        assert not enc.one_pass_sweep and enc.final_norm is None
        sweep = score_layers(cands[:20], refs[:20], tiny_gpt2)
        for layer in (0, 1, 2):
            _assert_same(sweep[layer], _single(cands[:20], refs[:20], tiny_gpt2, layer))
    finally:
        clear_cache()


def test_similarity_matrix_uses_the_same_layer(tiny_llama, korsts_pairs):
    """The plots' matrix at layer L gives the metric's unweighted P/R/F1 at layer L."""
    cands, refs, _ = korsts_pairs
    enc = load_encoder(tiny_llama)
    assert not enc.zero_weight_ids or enc.tokenizer.cls_token_id in enc.zero_weight_ids
    for layer in (2, 6):
        sm = similarity_matrix(cands[0], refs[0], model_type=tiny_llama, num_layers=layer)
        one = score_layers(cands[:1], refs[:1], tiny_llama, layers=[layer, 0])[layer]
        assert abs(sm["f1"] - one["f1"][0]) < TOL


def test_baseline_builder_uses_the_same_layers(tiny_gpt2, korean_texts):
    from kometrics.korbertscore.baseline import build_baseline, random_pairs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = build_baseline(korean_texts, tiny_gpt2, n_pairs=40, seed=3)
    a, b = random_pairs(korean_texts, 40, seed=3)
    for layer in (0, 1, 2):
        assert table[layer][2] == pytest.approx(float(np.mean(_single(a, b, tiny_gpt2, layer)["f1"])), abs=TOL)


def test_one_probe_does_not_change_the_model(tiny_gpt2):
    enc = load_encoder(tiny_gpt2)
    assert len(enc.model.h) == enc.depth  # the probe's cuts were undone
    assert isinstance(enc.final_norm, torch.nn.LayerNorm)


def test_a_path_object_is_accepted(tiny_gpt2, korsts_pairs):
    from pathlib import Path

    cands, refs, _ = korsts_pairs
    a = score(cands[:5], refs[:5], model_type=Path(tiny_gpt2), num_layers=1)
    b = score(cands[:5], refs[:5], model_type=tiny_gpt2, num_layers=1)
    assert a["f1"] == b["f1"] and a["hashcode"] == b["hashcode"]
