"""The LM head at real vocabulary sizes: the base model runs once, the output layer is applied to the scored
positions only, a bounded number at a time; heads that cannot be reproduced that way (soft-capping, rescaled
logits, no linear output layer) fall back to the model's own logits, a bounded number of rows per forward pass.
Every path is checked against the model's own full forward logits (the token-by-token hand loop)."""

from __future__ import annotations

import math

import pytest

from kometrics.perplexity import causal_nll, load_model, modeling, pseudo_nll, score, sliding_windows
from kometrics.perplexity.modeling import HeadPlan, head_plan

from .conftest import hand_nll, hand_pll_nll, just_over

REL = 1e-5


def _ids(tokenizer, text):
    return [tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False)["input_ids"]]


def _close(a, b, rel=REL):
    return all(math.isclose(x, y, rel_tol=rel) for x, y in zip(a, b, strict=True))


class _Shapes:
    """Record the input shape of every call of a module that runs to its end (a forward hook)."""

    def __init__(self, module, kwarg=None):
        self.shapes: list[tuple[int, ...]] = []
        self.kwarg = kwarg
        self.handle = module.register_forward_hook(self, with_kwargs=True)

    def __call__(self, module, args, kwargs, output):
        x = args[0] if args else kwargs[self.kwarg]
        self.shapes.append(tuple(x.shape))

    def remove(self):
        self.handle.remove()


def test_fast_path_scores_only_real_positions_in_chunks(tiny_gpt2, sentences, paragraphs, monkeypatch):
    model, tokenizer = load_model(tiny_gpt2)
    plan = head_plan(model)
    assert plan.fast and plan.head is model.lm_head
    assert model.lm_head.weight is model.transformer.wte.weight  # tied embeddings: the fast path applies
    vocab = model.config.vocab_size
    monkeypatch.setattr(modeling, "_LOGIT_ELEMENTS", 5 * vocab)  # 5 positions per log-softmax
    long = just_over(tokenizer, paragraphs[0], 150)  # longer than the 128 positions: sliding windows
    texts = [*sentences[:4], long]
    spy = _Shapes(model.lm_head)
    try:
        scores = causal_nll(texts, model, tokenizer, batch_size=3, stride=64)
    finally:
        spy.remove()
    # the output layer sees flat chunks of at most 5 scored positions, never a batch x length block or padding
    assert all(len(s) == 2 and s[0] <= 5 for s in spy.shapes)
    assert sum(s[0] for s in spy.shapes) == sum(s.token_count for s in scores)
    hands = []
    for text in texts:
        ids = _ids(tokenizer, text)
        start = {t: b for b, e, f in sliding_windows(len(ids), 128, 64) for t in range(f, e)}
        hands.append(hand_nll(model, ids, start))
    assert _close([s.nll_sum for s in scores], hands)


def test_masked_lm_head_scores_the_masked_position_only(tiny_bert, sentences, monkeypatch):
    model, tokenizer = load_model(tiny_bert, "masked")
    plan = head_plan(model)
    # BERT's head is transform (dense, GELU, LayerNorm) + decoder: the decoder's input is captured after the
    # transform, so the fast path reproduces the whole head
    assert plan.fast and plan.head is model.cls.predictions.decoder
    monkeypatch.setattr(modeling, "_LOGIT_ELEMENTS", 3 * model.config.vocab_size)
    texts = sorted(sentences, key=len)[:2]
    spy = _Shapes(plan.head)
    try:
        scores = pseudo_nll(texts, model, tokenizer, batch_size=8)
    finally:
        spy.remove()
    assert all(len(s) == 2 and s[0] <= 3 for s in spy.shapes)
    assert sum(s[0] for s in spy.shapes) == sum(s.token_count for s in scores)  # one position per masked copy
    hand = [hand_pll_nll(model, tokenizer, t) for t in texts]
    assert _close([s.nll_sum for s in scores], [h[0] for h in hand])
    assert [s.token_count for s in scores] == [h[1] for h in hand]


@pytest.mark.parametrize("fixture", ["tiny_gemma3", "tiny_gemma3_softcap"])
def test_gemma3_equals_its_own_logits(fixture, sentences, request):
    """Gemma 3 scales its input embeddings by sqrt(hidden) and ties the output layer to them; its head is the
    plain linear layer after the final norm unless final_logit_softcapping is set. Sliding-window attention
    (8 tokens) and padding on either side must not change the numbers."""
    path = request.getfixturevalue(fixture)
    model, tokenizer = load_model(path)
    softcap = model.config.final_logit_softcapping is not None
    modeling._PLANS.pop(model, None)  # decide afresh (another test may have settled it), warning included
    if softcap:
        with pytest.warns(UserWarning, match="final_logit_softcapping=3.0"):
            plan = head_plan(model)
    else:
        plan = head_plan(model)
    assert plan.fast is not softcap
    texts = sentences[:5]
    hand = [hand_nll(model, _ids(tokenizer, t)) for t in texts]
    for bs in (1, 4):
        for side in ("left", "right"):
            got = [s.nll_sum for s in causal_nll(texts, model, tokenizer, batch_size=bs, padding_side=side)]
            assert _close(got, hand), (bs, side)
    # scorer windows (stride) on top of the model's sliding attention
    text = max(sentences, key=len)
    ids = _ids(tokenizer, text)
    start = {t: b for b, e, f in sliding_windows(len(ids), 16, 6) for t in range(f, e)}
    (s,) = causal_nll([text], model, tokenizer, max_length=16, stride=6)
    assert s.nll_sum == pytest.approx(hand_nll(model, ids, start), rel=REL)


def test_softcapped_logits_fall_back_to_bounded_rows(tiny_gemma3_softcap, sentences, monkeypatch):
    model, tokenizer = load_model(tiny_gemma3_softcap)
    assert not head_plan(model).fast  # (the warning is checked above)
    texts = sentences[:4]
    hand = [hand_nll(model, _ids(tokenizer, t)) for t in texts]
    monkeypatch.setattr(modeling, "_LOGIT_ELEMENTS", 1)  # one row per forward pass
    spy = _Shapes(model, kwarg="input_ids")
    try:
        got = [s.nll_sum for s in causal_nll(texts, model, tokenizer, batch_size=4)]
    finally:
        spy.remove()
    assert spy.shapes and all(s[0] == 1 for s in spy.shapes)
    assert _close(got, hand)
    # the fallback matters: the linear layer alone (soft-capping skipped) gives other numbers
    monkeypatch.setitem(modeling._PLANS, model, HeadPlan(model.lm_head, "forced", next(model.parameters()).dtype))
    linear_only = [s.nll_sum for s in causal_nll(texts, model, tokenizer, batch_size=4)]
    assert all(abs(a - b) > 1e-2 * b for a, b in zip(linear_only, hand))


def _gpt2_variant(tiny_gpt2, kind):
    from transformers import GPT2LMHeadModel

    class Rescaled(GPT2LMHeadModel):  # an architecture that changes its logits without saying so in its config
        def forward(self, *args, **kwargs):
            out = super().forward(*args, **kwargs)
            out.logits = out.logits * 3.0
            return out

    class Headless(GPT2LMHeadModel):  # no output embedding layer to apply
        def get_output_embeddings(self):
            return None

    cls = Rescaled if kind == "rescaled" else Headless
    return cls.from_pretrained(tiny_gpt2).eval()


@pytest.mark.parametrize("kind,reason", [("rescaled", "differ from its output layer"),
                                         ("headless", "no output embedding layer")])
def test_heads_that_cannot_be_reproduced_use_the_models_logits(tiny_gpt2, sentences, kind, reason):
    _, tokenizer = load_model(tiny_gpt2)
    model = _gpt2_variant(tiny_gpt2, kind)
    texts = sentences[:3]
    with pytest.warns(UserWarning, match=reason):
        got = [s.nll_sum for s in causal_nll(texts, model, tokenizer, batch_size=2)]
    assert not head_plan(model).fast and reason in head_plan(model).reason
    assert _close(got, [hand_nll(model, _ids(tokenizer, t)) for t in texts])


def test_token_budget_bounds_every_forward_pass(tiny_gpt2, sentences, paragraphs):
    model, tokenizer = load_model(tiny_gpt2)
    texts = [paragraphs[0], *sentences, "짧다.", paragraphs[2]]
    base = score(texts, tiny_gpt2, batch_size=1)["nll_sums"]  # also settles the head plan (no probe below)
    for bs, max_tokens in ((16, 64), (16, 1), (4, 10**6), (64, 300)):
        calls: list = []
        hook = model.register_forward_pre_hook(
            lambda m, a, kw, calls=calls: calls.append((tuple(kw["input_ids"].shape),
                                                        int(kw["attention_mask"].sum(1).min()))),
            with_kwargs=True)
        try:
            got = score(texts, tiny_gpt2, batch_size=bs, max_tokens=max_tokens)["nll_sums"]
        finally:
            hook.remove()
        assert _close(got, base), (bs, max_tokens)
        assert calls
        for (rows, width), shortest in calls:
            assert rows <= bs and (rows == 1 or rows * width <= max_tokens), (bs, max_tokens, rows, width)
            assert rows == 1 or 2 * shortest > width  # no row that is mostly padding
        if max_tokens == 10**6:
            assert max(rows for (rows, _), _ in calls) == bs  # the budget, not the batch size, was binding above
    with pytest.raises(ValueError, match="max_tokens must be a positive integer"):
        score(["좋다"], tiny_gpt2, max_tokens=0)
