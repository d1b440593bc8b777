"""Zero-shot NLI on Gemma-3-270M (the demo's merge_sv_accuracy predictions): label-word scores equal a hand
token loop; the calibrated prediction is the argmax of the stated formula."""

from __future__ import annotations

import pytest

from tests.merge_sv_accuracy.test_zero_shot_nli import _hand

pytestmark = pytest.mark.real_model


def test_label_scores_equal_hand_loop_on_gemma(gemma, data_dir):
    from kometrics.datasets_scripts.merge import read_seeds
    from kometrics.models.zero_shot_nli import LABEL_WORDS, PROMPT, ZeroShotNLI, calibrated

    nli = ZeroShotNLI(str(gemma))
    assert nli.tokenizer.bos_token_id == 2
    seeds = read_seeds("klue", data_dir=data_dir, limit=2)
    out = nli.predict([s.premise for s in seeds], [s.hypothesis for s in seeds])
    for seed, scores in zip(seeds, out["scores"]):
        prompt = PROMPT.format(premise=seed.premise, hypothesis=seed.hypothesis)
        want = [_hand(nli.model, nli.tokenizer, prompt, " " + w) for w in LABEL_WORDS]
        assert scores == pytest.approx(want, abs=2e-4)
    cf = nli.content_free_scores()
    assert out["calibrated"] == [max(range(3), key=lambda i: calibrated(s, cf)[i]) for s in out["scores"]]
