"""Side-by-side parity with the reference implementation, bert_score 0.3.13, on real KorSTS pairs."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from kometrics.korbertscore import score

from ..conftest import require_module

bert_score = require_module("bert_score", "pip install bert-score==0.3.13 (kometrics[test])")

TOL = 1e-5


def _theirs(cands, refs, model, layer, batch_size=32, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (p, r, f), h = bert_score.score(cands, refs, model_type=model, num_layers=layer, lang="ko", nthreads=0,
                                        return_hash=True, batch_size=batch_size, **kw)
    return p.numpy(), r.numpy(), f.numpy(), h


def _assert_close(ours, theirs):
    for key, ref in zip(("precision", "recall", "f1"), theirs[:3]):
        diff = np.abs(np.asarray(ours[key]) - ref)
        assert diff.max() < TOL, (key, float(diff.max()), int(diff.argmax()))


@pytest.mark.parametrize("idf", [False, True])
def test_parity_single_reference(tiny_bert, korsts_pairs, idf):
    cands, refs, _ = korsts_pairs
    theirs = _theirs(cands, refs, tiny_bert, 8, idf=idf)
    ours = score(cands, refs, model_type=tiny_bert, num_layers=8, idf=idf, batch_size=17)
    _assert_close(ours, theirs)
    # Same fields in the hashcode: model, layer, idf.
    assert ours["hashcode"].split("_version")[0] == theirs[3].split("_version")[0]


def test_baseline_file_holds_bert_scores_means_of_the_random_pairs(tiny_bert, korean_texts, baseline_file):
    """The builder's file (bert_score's CSV format) against bert_score itself: at every layer, the mean P, R
    and F1 that bert_score.score gives for the same random pairs (all 13 layers of the 12-block model in one
    call, no idf, no rescaling)."""
    from kometrics.korbertscore.baseline import random_pairs

    lines = Path(baseline_file).read_text(encoding="utf-8").splitlines()
    assert lines[0] == "LAYER,P,R,F"
    table = np.array([[float(x) for x in line.split(",")] for line in lines[1:]])
    assert table[:, 0].tolist() == list(range(13))
    c, r = random_pairs(korean_texts, 300, seed=1)  # the fixture's pairs
    pool = {t.strip() for t in korean_texts}
    assert len(c) == len(r) == 300 and all(a != b and a in pool and b in pool for a, b in zip(c, r))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, rec, f = bert_score.score(c, r, model_type=tiny_bert, num_layers=12, all_layers=True, lang="ko",
                                     nthreads=0, batch_size=64)
    assert p.shape == (13, 300)
    want = np.stack([p.mean(dim=1).numpy(), rec.mean(dim=1).numpy(), f.mean(dim=1).numpy()], axis=1)
    np.testing.assert_allclose(table[:, 1:], want, atol=1e-6)


def test_parity_with_baseline_file(tiny_bert, korsts_pairs, baseline_file):
    cands, refs, _ = korsts_pairs
    theirs = _theirs(cands[:120], refs[:120], tiny_bert, 5, rescale_with_baseline=True, baseline_path=baseline_file)
    ours = score(cands[:120], refs[:120], model_type=tiny_bert, num_layers=5, rescale_with_baseline=True,
                 baseline_path=baseline_file)
    _assert_close(ours, theirs)
    assert ours["hashcode"].endswith("-custom-rescaled") and theirs[3].endswith("-custom-rescaled")
    raw = score(cands[:120], refs[:120], model_type=tiny_bert, num_layers=5)
    assert not np.allclose(raw["f1"], ours["f1"])


@pytest.mark.parametrize("idf", [False, True])
def test_parity_several_references(tiny_bert, korsts_pairs, idf):
    cands, refs, _ = korsts_pairs
    n = 80
    # Three references per prediction: its own pair, a shifted one, and (for some) a duplicate of the candidate.
    groups = [[refs[i], refs[(i + 7) % n], cands[i] if i % 5 == 0 else refs[(i + 13) % n]] for i in range(n)]
    theirs = _theirs(cands[:n], groups, tiny_bert, 6, idf=idf)
    ours = score(cands[:n], groups, model_type=tiny_bert, num_layers=6, idf=idf)
    _assert_close(ours, theirs)
    # The best reference is the one whose own F1 is highest (scored alone against the candidate).
    flat = score([c for c in cands[:n] for _ in range(3)], [r for g in groups for r in g], model_type=tiny_bert,
                 num_layers=6, idf=[r for g in groups for r in g] if idf else False)
    per = np.asarray(flat["f1"]).reshape(n, 3)
    assert ours["best_reference"] == per.argmax(axis=1).tolist()
    assert all(ours["best_reference"][i] == 2 for i in range(0, n, 5))


def test_bert_score_idf_dict_is_accepted(tiny_bert, korsts_pairs):
    from bert_score.utils import get_idf_dict, get_tokenizer

    cands, refs, _ = korsts_pairs
    idf_dict = get_idf_dict(refs[:50], get_tokenizer(tiny_bert), nthreads=0)
    ours = score(cands[:50], refs[:50], model_type=tiny_bert, num_layers=8, idf=idf_dict)
    theirs = _theirs(cands[:50], refs[:50], tiny_bert, 8, idf=True)
    _assert_close(ours, theirs)


@pytest.mark.parametrize("layer", [2, 6])
def test_parity_model_with_a_final_norm(tiny_llama, korsts_pairs, layer):
    """bert_score cuts a Llama's block list and takes its output, so its layer L has the final RMSNorm applied
    (also below the last block): our num_layers=L and our sweep at L give the same numbers.

    bert_score runs one pair at a time here: in a padded batch it clips a best-match cosine below 0 to 0 (the
    padding's masked similarity), and this random model has such pieces in some builds (its vocabulary is not
    identical from build to build), which made a batched comparison fail on one pair in a few runs."""
    from kometrics.korbertscore import score_layers

    cands, refs, _ = korsts_pairs
    theirs = _theirs(cands[:80], refs[:80], tiny_llama, layer, batch_size=1)
    _assert_close(score(cands[:80], refs[:80], model_type=tiny_llama, num_layers=layer), theirs)
    sweep = score_layers(cands[:80], refs[:80], tiny_llama, layers=[0, layer, 6] if layer < 6 else [0, 6])
    _assert_close(sweep[layer], theirs)
