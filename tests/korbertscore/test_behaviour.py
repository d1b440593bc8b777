"""Invariances, model reuse, idf freshness, layer cutting, long texts and hand-checked math."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from kometrics.korbertscore import load_encoder, score, score_layers, similarity_matrix
from kometrics.korbertscore.scoring import f1, greedy_match, idf_weights, max_over_references, rescale

SENTS = ["오늘은 날씨가 정말 맑다.", "회의는 내일 오전에 열린다.", "그는 매일 아침 운동을 한다.",
         "서울의 인구는 천만 명 정도이다.", "비가 와서 경기가 취소되었다."]


def quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def test_batch_size_and_batch_content_do_not_change_scores(tiny_bert, korsts_pairs):
    cands, refs, _ = korsts_pairs
    c, r = cands[:40], refs[:40]
    base = score(c, r, model_type=tiny_bert, num_layers=7)
    for bs in (1, 3, 64):
        other = score(c, r, model_type=tiny_bert, num_layers=7, batch_size=bs)
        np.testing.assert_allclose(other["f1"], base["f1"], atol=1e-6)
    # Pair 0 alone, and pair 0 among other (longer) sentences, in reverse order.
    alone = score(c[:1], r[:1], model_type=tiny_bert, num_layers=7)
    mixed = score(list(reversed(cands[:120])), list(reversed(refs[:120])), model_type=tiny_bert, num_layers=7)
    assert abs(alone["f1"][0] - base["f1"][0]) < 1e-6
    np.testing.assert_allclose(list(reversed(mixed["f1"]))[:40], base["f1"], atol=1e-6)


def test_identity_and_symmetry(tiny_bert):
    res = score(SENTS, SENTS, model_type=tiny_bert, num_layers=5)
    np.testing.assert_allclose(res["precision"], 1.0, atol=1e-6)
    np.testing.assert_allclose(res["f1"], 1.0, atol=1e-6)
    ab = score(SENTS[:2], SENTS[2:4], model_type=tiny_bert, num_layers=5)
    ba = score(SENTS[2:4], SENTS[:2], model_type=tiny_bert, num_layers=5)
    np.testing.assert_allclose(ab["precision"], ba["recall"], atol=1e-6)
    np.testing.assert_allclose(ab["f1"], ba["f1"], atol=1e-6)


def test_score_matches_hand_computation_from_similarity_matrix(tiny_bert):
    sm = similarity_matrix(SENTS[0], SENTS[1], model_type=tiny_bert, num_layers=6)
    sim = sm["matrix"]
    # [CLS] and [SEP] (first and last pieces) stay in the max with weight 0.
    p = sim[1:-1].max(axis=1).mean()
    r = sim[:, 1:-1].max(axis=0).mean()
    res = score([SENTS[0]], [SENTS[1]], model_type=tiny_bert, num_layers=6)
    assert abs(res["precision"][0] - p) < 1e-5 and abs(res["recall"][0] - r) < 1e-5
    assert abs(res["f1"][0] - 2 * p * r / (p + r)) < 1e-5
    assert sm["candidate_tokens"][0] == "[CLS]" and sm["reference_tokens"][-1] == "[SEP]"
    strict = score([SENTS[0]], [SENTS[1]], model_type=tiny_bert, num_layers=6, exclude_special_tokens=True)
    inner = sim[1:-1, 1:-1]
    assert abs(strict["precision"][0] - inner.max(axis=1).mean()) < 1e-5
    assert abs(strict["recall"][0] - inner.max(axis=0).mean()) < 1e-5


def test_score_layers_equals_score_per_layer(tiny_bert, korsts_pairs):
    cands, refs, _ = korsts_pairs
    layers = score_layers(cands[:30], refs[:30], tiny_bert)
    assert sorted(layers) == list(range(13))
    for layer in (0, 4, 12):
        one = score(cands[:30], refs[:30], model_type=tiny_bert, num_layers=layer)
        for key in ("precision", "recall", "f1"):
            np.testing.assert_allclose(layers[layer][key], one[key], atol=1e-5)


def test_only_the_first_blocks_run(tiny_bert):
    enc = load_encoder(tiny_bert)
    calls = []
    hooks = [blk.register_forward_hook(lambda m, i, o, k=k: calls.append(k)) for k, blk in enumerate(enc.model.encoder.layer)]
    try:
        score(SENTS[:2], SENTS[1:3], model_type=tiny_bert, num_layers=3)
        assert sorted(set(calls)) == [0, 1, 2]
        calls.clear()
        score_layers(SENTS[:2], SENTS[1:3], tiny_bert, layers=[2, 5])
        assert sorted(set(calls)) == [0, 1, 2, 3, 4]
    finally:
        for h in hooks:
            h.remove()
    assert len(enc.model.encoder.layer) == 12  # restored


def test_model_loaded_once_per_model_device_dtype(tiny_bert):
    a = load_encoder(tiny_bert)
    assert load_encoder(tiny_bert, device="cpu") is a
    b = load_encoder(tiny_bert, dtype="bfloat16")
    assert b is not a and b.dtype == torch.bfloat16 and load_encoder(tiny_bert, dtype="bfloat16") is b


def test_idf_is_recomputed_when_the_idf_sentences_change(tiny_bert):
    c, r1, r2 = SENTS[:2], SENTS[2:4], [SENTS[4], SENTS[0]]
    first = score(c, r1, model_type=tiny_bert, num_layers=5, idf=True)
    second = score(c, r2, model_type=tiny_bert, num_layers=5, idf=True)
    fresh = score(c, r2, model_type=tiny_bert, num_layers=5, idf=list(r2))
    assert second["f1"] == fresh["f1"]
    third = score(c, r1, model_type=tiny_bert, num_layers=5, idf=SENTS)  # other idf sentences, other weights
    assert third["precision"] != first["precision"]


def test_unknown_model_gets_depth_rule_with_warning(tiny_bert):
    with pytest.warns(UserWarning, match="num_layers"):
        res = score(SENTS[:1], SENTS[1:2], model_type=tiny_bert)
    assert res["num_layers"] == 8  # round(12 * 8 / 12)


def test_long_texts_window_truncate_error(tiny_bert):
    enc = load_encoder(tiny_bert)
    long = " ".join(SENTS * 12)  # several hundred pieces, far more than the 128 positions
    n_pieces = len(enc.tokenizer(long, add_special_tokens=False)["input_ids"])
    assert n_pieces > 2 * enc.max_length
    res = score([long, SENTS[0]], [long, long], model_type=tiny_bert, num_layers=5)
    assert abs(res["f1"][0] - 1.0) < 1e-6  # a long text against itself, embedded whole
    sm = similarity_matrix(long, SENTS[0], model_type=tiny_bert, num_layers=5)
    assert len(sm["candidate_tokens"]) == n_pieces + 2  # nothing dropped
    with pytest.warns(UserWarning, match="truncated"):
        trunc = score([long], [SENTS[0]], model_type=tiny_bert, num_layers=5, long_text="truncate")
    whole = score([long], [SENTS[0]], model_type=tiny_bert, num_layers=5)
    assert abs(trunc["precision"][0] - whole["precision"][0]) > 1e-4  # truncation dropped candidate pieces
    with pytest.raises(ValueError, match=r"predictions\[0\].*long_text"):
        score([long], [SENTS[0]], model_type=tiny_bert, num_layers=5, long_text="error")


def test_window_pieces_keep_the_context_of_their_window(tiny_bert):
    """Every piece of a long text is the piece embedded in the window where it sits farthest from an edge.

    The windows are computed here from the definition: ``room`` pieces each (max_length minus [CLS] and [SEP]),
    starting every ``room // 2`` pieces while a window fits, plus one window ending at the last piece; a piece
    whose best margin ties is taken from the earlier window. Each window is then embedded alone.
    """
    from kometrics.korbertscore.embedding import embed, tokenize

    enc = load_encoder(tiny_bert)
    ids = tokenize(enc, [" ".join(SENTS * 3)])[0]
    n, room = len(ids), 30 - 2
    assert n > 3 * room and (n - room) % (room // 2) != 0  # several windows, the last one aligned to the end
    starts = sorted({k * (room // 2) for k in range(n) if k * (room // 2) + room <= n} | {n - room})
    assert starts[-1] == n - room and all(b - a <= room // 2 for a, b in zip(starts, starts[1:]))
    emb = embed(enc, [ids], [5], max_length=30)
    assert int(emb.lengths[0]) == n + 2
    rows = emb.packed[int(emb.offsets[0]):int(emb.offsets[0]) + n + 2]
    alone = {s: embed(enc, [ids[s:s + room]], [5]).packed for s in starts}
    assert all(len(v) == room + 2 for v in alone.values())
    for j in range(n):
        margins = [min(j - s, s + room - 1 - j) if s <= j < s + room else -1 for s in starts]
        s = starts[margins.index(max(margins))]
        assert torch.allclose(rows[1 + j], alone[s][1 + j - s], atol=1e-5), (j, s)
    assert torch.allclose(rows[0], alone[starts[0]][0], atol=1e-5)  # [CLS] of the first window
    assert torch.allclose(rows[-1], alone[starts[-1]][-1], atol=1e-5)  # [SEP] of the last window
    # the windows matter: a piece near the end of the first window is not the one seen at the start of a text
    assert not torch.allclose(rows[room], alone[0][room], atol=1e-5)


def test_sentinel_model_max_length_is_capped(tiny_bert, tmp_path):
    import shutil

    from transformers import AutoTokenizer

    copy = tmp_path / "sentinel"
    shutil.copytree(tiny_bert, copy)
    tok = AutoTokenizer.from_pretrained(copy)
    tok.model_max_length = int(1e30)
    tok.save_pretrained(copy)
    enc = load_encoder(str(copy))
    assert enc.max_length == 128
    res = score([" ".join(SENTS * 8)], [SENTS[0]], model_type=str(copy), num_layers=2)
    assert 0 < res["recall"][0] <= 1.0


# ---- the math, by hand -------------------------------------------------------------------------------


def test_greedy_match_against_a_loop():
    g = torch.Generator().manual_seed(0)
    sim = torch.rand((2, 4, 5), generator=g) * 2 - 1
    cv = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    rv = torch.tensor([[1, 1, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    cw = torch.tensor([[0.0, 2.0, 1.0, 0.0], [1.0, 1.0, 1.0, 0.0]])
    rw = torch.tensor([[1.0, 3.0, 0, 0, 0], [0.0, 1.0, 1.0, 1.0, 1.0]])
    p, r = greedy_match(sim, cv, rv, cw, rw)
    for b in range(2):
        m, n = int(cv[b].sum()), int(rv[b].sum())
        s = sim[b, :m, :n].numpy()
        exp_p = sum(cw[b, j].item() * s[j].max() for j in range(m)) / cw[b, :m].sum().item()
        exp_r = sum(rw[b, i].item() * s[:, i].max() for i in range(n)) / rw[b, :n].sum().item()
        assert abs(p[b].item() - exp_p) < 1e-6 and abs(r[b].item() - exp_r) < 1e-6
    assert abs(f1(torch.tensor(0.5), torch.tensor(0.25)).item() - 2 * 0.5 * 0.25 / 0.75) < 1e-7
    assert f1(torch.tensor(0.0), torch.tensor(0.0)).item() == 0.0


def test_idf_formula():
    weights, default = idf_weights([[1, 2, 2, 3], [1, 4], [1]])
    assert weights[1] == pytest.approx(math.log(4 / 4))
    assert weights[2] == pytest.approx(math.log(4 / 2))  # counted once per sentence
    assert default == pytest.approx(math.log(4))


def test_rescale_and_max_over_references():
    assert rescale(np.array([0.8]), 0.6)[0] == pytest.approx(0.5)
    vals = np.array([[0.1, 0.9, 0.3, 0.5, 0.7], [0.2, 0.1, 0.6, 0.6, 0.9]])
    groups = np.array([0, 0, 1, 1, 1])
    maxed, best = max_over_references(vals, groups, 2)
    np.testing.assert_allclose(maxed, [[0.9, 0.7], [0.2, 0.9]])
    assert best.tolist() == [0, 2]


def test_chunked_scoring_equals_one_chunk(tiny_bert, korsts_pairs, monkeypatch):
    from kometrics.korbertscore import pipeline

    cands, refs, _ = korsts_pairs
    c = cands[:20] + [""]
    groups = [[refs[i], cands[(i + 3) % 20]] for i in range(20)] + [["무엇"]]
    whole = quiet(score, c, groups, model_type=tiny_bert, num_layers=6, idf=True)
    layers_whole = score_layers(cands[:20], refs[:20], tiny_bert, layers=[3, 6])
    monkeypatch.setattr(pipeline, "_PREDICTIONS_PER_CHUNK", 7)
    with pytest.warns(UserWarning, match=r"predictions\[20\]"):
        parts = score(c, groups, model_type=tiny_bert, num_layers=6, idf=True)
    assert parts["best_reference"] == whole["best_reference"]
    np.testing.assert_allclose(parts["f1"], whole["f1"], atol=1e-6)
    layers_parts = score_layers(cands[:20], refs[:20], tiny_bert, layers=[3, 6])
    np.testing.assert_allclose(layers_parts[3]["f1"], layers_whole[3]["f1"], atol=1e-6)
