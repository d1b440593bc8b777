"""Zero-shot Korean NLI with a causal LM: the model scores the three label words after a prompt.

For a premise/hypothesis pair the model reads (after ``<bos>``)::

    전제: {premise}
    가설: {hypothesis}
    질문: 전제가 참일 때 가설은 함의, 중립, 모순 중 무엇인가?
    답:

and each label word ``" 함의"`` (entailment, 0), ``" 중립"`` (neutral, 1), ``" 모순"`` (contradiction, 2) is
scored by its log-probability as a continuation (the sum over its tokens, each conditioned on the prompt and
the label's earlier tokens; the word is tokenized on its own and appended to the prompt's ids, so the prompt is
never re-tokenized). The label ids are KLUE-NLI's.

**Contextual calibration** (Zhao et al., 2021, "Calibrate Before Use"): a small LM prefers some label words
whatever it reads. With ``calibrate=True`` the label distribution ``p(y | x)`` (the three scores softmaxed) is
divided by the distribution it gives to content-free inputs (premise and hypothesis both ``"N/A"``, both empty;
averaged), and the prediction is the argmax of ``log p(y | x) - log p_cf(y)``. Both the raw and the calibrated
predictions are returned, so a report can show both.

These predictions come from a language model asked a question, not from a trained NLI classifier: a 270M
base model answers near chance; say so wherever the numbers are shown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LABEL_WORDS", "PROMPT", "CONTENT_FREE", "ZeroShotNLI", "continuation_logprobs", "calibrated"]

#: The label words, in KLUE-NLI's label order: entailment 0, neutral 1, contradiction 2.
LABEL_WORDS: tuple[str, str, str] = ("함의", "중립", "모순")
#: The prompt; the label word follows after one space.
PROMPT = "전제: {premise}\n가설: {hypothesis}\n질문: 전제가 참일 때 가설은 함의, 중립, 모순 중 무엇인가?\n답:"
#: Content-free inputs for contextual calibration: (premise, hypothesis).
CONTENT_FREE: tuple[tuple[str, str], ...] = (("N/A", "N/A"), ("", ""))


def continuation_logprobs(model: Any, tokenizer: Any, prompt: str, continuations: Sequence[str],
                          device: str = "cpu") -> list[float]:
    """``log P(c | <bos> prompt)`` in nats for each continuation ``c`` (sum over c's tokens).

    ``prompt`` and each ``c`` are tokenized separately without special tokens and their ids concatenated after
    one ``<bos>`` (else ``<eos>``). The rows share the prompt; they are right-padded (pads come after every
    scored position, so they change nothing) and only the last ``max(len(c)) + 1`` positions get logits.
    """
    import torch

    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    if start is None:
        raise ValueError("the tokenizer has neither a <bos> nor an <eos> token to condition on")
    head = [start, *tokenizer(prompt, add_special_tokens=False)["input_ids"]]
    tails = [tokenizer(c, add_special_tokens=False)["input_ids"] for c in continuations]
    if any(not t for t in tails):
        raise ValueError(f"a continuation tokenizes to nothing: {list(continuations)!r}")
    width = max(len(t) for t in tails)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else start
    ids = torch.full((len(tails), len(head) + width), pad, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for r, tail in enumerate(tails):
        row = head + tail
        ids[r, :len(row)] = torch.tensor(row)
        mask[r, :len(row)] = 1
    with torch.no_grad():
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                       logits_to_keep=width + 1).logits.float()
    # logits[:, j] predicts the token at position len(head) - 1 + j + 1 = len(head) + j (j = 0 .. width - 1).
    logp = torch.log_softmax(logits[:, :width], dim=-1).cpu()
    out = []
    for r, tail in enumerate(tails):
        out.append(float(sum(logp[r, j, tok] for j, tok in enumerate(tail))))
    return out


def _log_softmax(xs: Sequence[float]) -> list[float]:
    m = max(xs)
    z = m + math.log(sum(math.exp(x - m) for x in xs))
    return [x - z for x in xs]


def calibrated(scores: Sequence[float], content_free: Sequence[float]) -> list[float]:
    """``log p(y | x) - log p_cf(y)``: both are the label scores softmaxed over the labels (nats)."""
    return [a - b for a, b in zip(_log_softmax(scores), _log_softmax(content_free))]


def _argmax(xs: Sequence[float]) -> int:
    return max(range(len(xs)), key=lambda i: (xs[i], -i))


@dataclass
class ZeroShotNLI:
    """Zero-shot NLI labels (0 entailment, 1 neutral, 2 contradiction) from a causal LM's label-word scores.

    ``model`` is a Hub id or a folder (e.g. ``kometrics models prepare gemma-3-270m``'s), or an already loaded
    ``(model, tokenizer)`` pair (e.g. a :class:`~kometrics.datasets_scripts.merge.causal.CausalLMScorer`'s, so
    the MERE source LM is loaded once).
    """

    model: Any
    tokenizer: Any = None
    device: str | None = None
    label_words: tuple[str, ...] = LABEL_WORDS
    prompt: str = PROMPT
    _content_free: list[float] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from kometrics.perplexity.model_setup import resolve_device

        self.device = resolve_device(self.device)
        if isinstance(self.model, str):
            from kometrics.perplexity import load_model

            # loaded once per process and shared (e.g. with the perplexity metric on the same model)
            self.model, self.tokenizer = load_model(self.model, "causal", device=self.device)
        if self.tokenizer is None:
            raise ValueError("pass the tokenizer with a loaded model")
        self.model.eval()

    def label_scores(self, premise: str, hypothesis: str) -> list[float]:
        """``log P(" " + word | prompt)`` for each label word (nats), in label order."""
        return continuation_logprobs(self.model, self.tokenizer, self.prompt.format(premise=premise,
                                                                                    hypothesis=hypothesis),
                                     [" " + w for w in self.label_words], self.device)

    def content_free_scores(self) -> list[float]:
        """The label distribution's log (softmax over labels) averaged in probability over :data:`CONTENT_FREE`."""
        if self._content_free is None:
            probs = [0.0] * len(self.label_words)
            for p, h in CONTENT_FREE:
                logp = _log_softmax(self.label_scores(p, h))
                probs = [a + math.exp(x) / len(CONTENT_FREE) for a, x in zip(probs, logp)]
            self._content_free = [math.log(p) for p in probs]
        return self._content_free

    def predict(self, premises: Sequence[str], hypotheses: Sequence[str], progress=None) -> dict[str, list]:
        """``{"raw": labels, "calibrated": labels, "scores": [[s0, s1, s2], ...]}`` for each pair."""
        if len(premises) != len(hypotheses):
            raise ValueError(f"premises and hypotheses differ in length: {len(premises)} vs {len(hypotheses)}")
        cf = self.content_free_scores()
        pairs = list(zip(premises, hypotheses))
        scores = [self.label_scores(p, h) for p, h in (progress(pairs) if progress else pairs)]
        return {"raw": [_argmax(s) for s in scores],
                "calibrated": [_argmax(calibrated(s, cf)) for s in scores],
                "scores": scores}
