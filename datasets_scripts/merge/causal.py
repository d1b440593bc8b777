"""MERE with a causal LM as the source of variants (the MERGE paper reports that the source LM does not bias
the results, so a causal LM is a fair stand-in where no Korean masked LM is at hand).

:class:`CausalLMScorer` plays the fill-mask scorer's part for :func:`.mere.generate_variants`:

- **Candidates** for the stem that begins an eojeol at ``text[start:end]`` are the causal LM's most probable
  next tokens given the left context (``<bos>`` + the text before the eojeol). A token must start a new
  word where the stem starts one (its decoded form begins with the space that precedes the stem); a token
  that would continue the previous word is reported as a subword piece (``##`` + its text), so the
  generator counts it under ``subword_piece``. The generator then keeps whole stems that re-tag to the
  same word class, with the MLM path's punctuation, already-in-sentence and floor filters.
- **P(r)** of a candidate (for the floor and the ordering) is its continuation probability
  ``P(r | left context) = exp(logP(left + r) - logP(left))`` (chain rule over r's tokens).
- **The constraint P(r) > P(o)** is decided on whole sentences: the variant premise and the variant
  hypothesis must each have a higher total log-probability than the seed's, where the total is the sum of
  the ``<bos>``-conditioned token log-probabilities of the whole sentence (:meth:`sentence_logprob`, in nats).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .mere import MaskScores

__all__ = ["CausalLMScorer", "sentence_logprobs"]


def sentence_logprobs(model, tokenizer, texts: Sequence[str], device: str = "cpu", batch_size: int = 16
                      ) -> list[float]:
    """``sum_t log P(x_t | <bos>, x_<t)`` of each text (nats; 0.0 for the empty text), in batches.

    The text is tokenized without special tokens and one ``<bos>`` (else ``<eos>``) is put in front, so the
    first token is scored too. Padding is on the right and masked; results do not depend on the batch.
    """
    import torch

    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    if start is None:
        raise ValueError("the tokenizer has neither a <bos> nor an <eos> token to condition the first token on")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else start
    out = [0.0] * len(texts)
    encoded = [(i, [start, *tokenizer(t, add_special_tokens=False)["input_ids"]]) for i, t in enumerate(texts) if t]
    encoded.sort(key=lambda x: -len(x[1]))
    for b in range(0, len(encoded), batch_size):
        chunk = encoded[b:b + batch_size]
        width = len(chunk[0][1])
        ids = torch.full((len(chunk), width), pad, dtype=torch.long)
        mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for r, (_, seq) in enumerate(chunk):
            ids[r, :len(seq)] = torch.tensor(seq)
            mask[r, :len(seq)] = 1
        with torch.no_grad():
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits[:, :-1]
            target = logits.gather(-1, ids[:, 1:, None].to(device))[..., 0].float()
            logp = target - torch.logsumexp(logits.float(), dim=-1)  # log-softmax at the targets only
        logp = (logp * mask[:, 1:].to(device)).sum(-1).cpu()
        for r, (i, _) in enumerate(chunk):
            out[i] = float(logp[r])
    return out


@dataclass
class CausalLMScorer:
    """Candidate stems and sentence log-probabilities from a transformers causal LM (a Hub id or a local
    folder, e.g. the Gemma-3-270M folder of ``kometrics models prepare gemma-3-270m``).

    Forward passes are cached per text, so scoring the same prefix or sentence again costs nothing.
    """

    model_name_or_path: str
    device: str | None = None
    batch_size: int = 8
    _cache: dict = field(default_factory=dict, repr=False)
    _next: dict = field(default_factory=dict, repr=False)

    kind = "causal"

    def __post_init__(self) -> None:
        from transformers import AutoConfig

        from kometrics.perplexity import load_model
        from kometrics.perplexity.model_setup import resolve_device

        archs = getattr(AutoConfig.from_pretrained(self.model_name_or_path), "architectures", None) or []
        if any("MaskedLM" in a for a in archs):
            raise ValueError(f"{self.model_name_or_path} is a masked LM ({archs[0]}): pass it as --mlm, not --lm")
        self.device = resolve_device(self.device)  # the metrics' spellings: None/"auto", "gpu", "cuda:1" ...
        # loaded once per process in float32 and shared (the demo's perplexity and zero-shot NLI use it too)
        self.model, self.tokenizer = load_model(self.model_name_or_path, "causal", device=self.device)

    # --- log-probabilities ------------------------------------------------------------------------------
    def logprobs(self, texts: Sequence[str]) -> list[float]:
        """Total ``<bos>``-conditioned log-probability (nats) of each text; cached."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            for t, lp in zip(todo, sentence_logprobs(self.model, self.tokenizer, todo, self.device, self.batch_size)):
                self._cache[t] = lp
        return [self._cache[t] for t in texts]

    def sentence_logprob(self, text: str) -> float:
        """The constraint's score: sum of the ``<bos>``-conditioned token log-probabilities of ``text`` (nats)."""
        return self.logprobs([text])[0]

    def continuation_probability(self, left: str, continuation: str) -> float:
        """``P(continuation | left) = exp(logP(left + continuation) - logP(left))``."""
        import math

        full, base = self.logprobs([left + continuation, left])
        return math.exp(min(0.0, full - base))

    def _next_token(self, left: str):
        if left not in self._next:
            import torch

            start = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.tokenizer.eos_token_id
            ids = [start, *self.tokenizer(left, add_special_tokens=False)["input_ids"]] if left else [start]
            with torch.no_grad():
                logits = self.model(input_ids=torch.tensor([ids], device=self.device)).logits[0, -1].float()
            self._next[left] = torch.softmax(logits, -1).cpu()
        return self._next[left]

    # --- the fill-mask scorer interface -----------------------------------------------------------------
    def __call__(self, text: str, start: int, end: int, want: Sequence[str] = (), top_k: int = 30
                 ) -> MaskScores | str:
        left = text[:start].rstrip()
        sep = text[len(left):start]  # the whitespace (or nothing) between the left context and the stem
        if "\n" in sep:
            return "span_not_aligned"
        probs = self._next_token(left)
        values, ids = probs.topk(top_k)
        cands: dict[str, float] = {}
        for tid, p in zip(ids.tolist(), values.tolist()):
            if tid in self.tokenizer.all_special_ids:
                piece = self.tokenizer.convert_ids_to_tokens(tid)
                key = piece if piece.startswith("<") else f"<{piece}>"
            else:
                decoded = self.tokenizer.decode([tid])
                if sep and decoded.startswith(sep):
                    key = decoded[len(sep):]
                elif not sep and not decoded[:1].isspace():
                    key = decoded
                else:  # continues the previous word (or adds a space where there is none)
                    key = "##" + decoded.strip()
            if key not in cands:
                cands[key] = p
        import math

        wanted = [w for w in dict.fromkeys(want) if w]
        conts = [sep + w for w in wanted] + [sep + text[start:end]]
        lps = self.logprobs([left] + [left + c for c in conts])  # one batched pass over all continuations
        probs_of = [math.exp(min(0.0, lp - lps[0])) for lp in lps[1:]]
        for w, p in zip(wanted, probs_of):
            cands[w] = p
        return MaskScores(probs_of[-1], cands)
