"""A local ``transformers`` causal LM as the LMRE builder's LLM, with constrained decoding.

A small local model asked to copy a sentence and add break marks rewrites the words, so nearly every answer
would be discarded. :class:`LocalCausalLM` therefore does not let it write words at all: it gets the same
few-shot prompt as the OpenAI backend (through the tokenizer's chat template when it has one, else as plain
text), and for each utterance of the request the answer ``<k>. w1 ? w2 ? ... wn`` is forced word by word;
at each of the n-1 word boundaries the model chooses among

    no break  " " + w_next,    AP  " /" + " " + w_next,    IP  " //" + " " + w_next

by its own next-token probabilities: an option's score is the log-probability of what the model would
write next to take it, i.e. of the first token of ``" " + w_next`` for no break and of the tokens of
``" /"`` / ``" //"`` for a break (each tokenized on its own and appended to the context; scoring the
whole option text instead would penalise a break for its extra tokens). The choice is the argmax at
``temperature`` 0 or a draw from ``softmax(score / temperature)`` otherwise, with a generator seeded from
the request (its messages) and the builder's seed, so a rerun asks the same. The chosen option's tokens
(the mark, if any, then ``" " + w_next``) join the context and the next boundary is decided. Every utterance is decoded after the prompt and its own ``<k>. `` (not after
the other utterances' answers), so the utterances of a request are independent; the prompt is encoded once
per request and its key/value cache reused. Every reference therefore keeps the utterance's words.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import math
import random
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["BREAK_OPTIONS", "LocalCausalLM", "annotate", "choose", "prompt_text", "utterances_of"]

#: The three choices at a word boundary, in a fixed order (ties go to the earlier one).
BREAK_OPTIONS = ("", " /", " //")
_ITEM = re.compile(r"^(\d+)\.\s(.*)$")


def utterances_of(messages: Sequence[dict[str, str]]) -> list[tuple[str, list[str]]]:
    """The numbered utterances of a builder request: ``[(number, words), ...]`` from the lines after
    ``Annotate these N sentences:`` in the last message."""
    text = messages[-1]["content"]
    head, sep, tail = text.rpartition("Annotate these ")
    if not sep:
        raise ValueError("the request has no 'Annotate these N sentences:' part")
    out = []
    for line in tail.splitlines()[1:]:
        m = _ITEM.match(line)
        if m:
            out.append((m.group(1), m.group(2).split()))
    return out


def prompt_text(tokenizer: Any, messages: Sequence[dict[str, str]]) -> str:
    """The request as the model reads it: the chat template with the generation prompt when the tokenizer has
    one, else the messages as plain text followed by ``Answer:``."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
    return "\n\n".join(m["content"] for m in messages) + "\n\nAnswer:\n"


def choose(scores: Sequence[float], temperature: float, rng: random.Random) -> int:
    """The index of the chosen option: the first maximum at temperature 0, else a draw from
    ``softmax(scores / temperature)`` with ``rng``."""
    if temperature <= 0:
        return max(range(len(scores)), key=lambda i: (scores[i], -i))
    top = max(scores)
    weights = [math.exp((s - top) / temperature) for s in scores]
    r = rng.random() * sum(weights)
    for i, w in enumerate(weights):
        r -= w
        if r < 0:
            return i
    return len(weights) - 1


class LocalCausalLM:
    """The builder backend: ``llm(messages, temperature) -> "1. ...\\n2. ..."`` with constrained decoding.

    ``model_name_or_path``: a Hub id or a local folder (e.g. ``kometrics models prepare gemma-3-270m``).
    ``seed`` enters every request's generator (temperature > 0). Exceptions are not retried.
    """

    def __init__(self, model_name_or_path: str, device: str | None = None, seed: int = 0, dtype: Any = None) -> None:
        from kometrics.perplexity import load_model
        from kometrics.perplexity.model_setup import resolve_device

        self.device = resolve_device(device)  # the metrics' spellings: None/"auto", "gpu", "cuda:1" ...
        # loaded once per process (float32 unless dtype says otherwise) and shared with the other users
        self.model, self.tokenizer = load_model(model_name_or_path, "causal", device=self.device, dtype=dtype)
        self.seed = seed
        self.name = f"local:{model_name_or_path}"

    # --- builder backend protocol ---------------------------------------------------------------------
    def is_retryable(self, exc: BaseException) -> bool:
        return False

    def retry_after(self, exc: BaseException) -> float | None:
        return None

    def __repr__(self) -> str:
        return f"LocalCausalLM({self.name!r})"

    def __call__(self, messages: list[dict[str, str]], temperature: float) -> str:
        import torch

        items = utterances_of(messages)
        digest = hashlib.sha256(repr((messages, temperature, self.seed)).encode("utf-8")).hexdigest()
        rng = random.Random(digest)
        prompt = self._ids(prompt_text(self.tokenizer, messages), bos=True)
        longest = max((len(self._ids(" // ".join([f"{n}."] + w))) for n, w in items), default=0)
        limit = getattr(self.model.config, "max_position_embeddings", None) or getattr(self.model.config, "n_positions", None)
        if limit and len(prompt) + longest > limit:
            raise ValueError(f"{self.name}: the prompt ({len(prompt)} tokens) and an answer (up to {longest}) exceed "
                             f"the model's {limit} positions; use fewer few-shot examples (--few-shot-size) or a "
                             "smaller --batch-size")
        with torch.no_grad():
            out = self.model(input_ids=torch.tensor([prompt], device=self.device), use_cache=True)
        cache = _cache_of(out)
        lines = []
        for number, words in items:
            breaks = self.decode(cache, out.logits[0, -1], number, words, temperature, rng)
            lines.append(f"{number}. {annotate(words, breaks)}")
        return "\n".join(lines)

    # --- decoding -------------------------------------------------------------------------------------
    def _ids(self, text: str, bos: bool = False) -> list[int]:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        start = self.tokenizer.bos_token_id
        return [start, *ids] if bos and start is not None else ids

    def _extend(self, past, last_logits, ids: list[int]):
        """Feed ``ids`` after the cached context: (their log-probabilities, new cache, last logits)."""
        import torch

        logps = [float(torch.log_softmax(last_logits.float(), -1)[ids[0]])]
        with torch.no_grad():
            out = self.model(input_ids=torch.tensor([ids], device=self.device), use_cache=True, **{_cache_arg(): past})
        if len(ids) > 1:
            steps = torch.log_softmax(out.logits[0, :-1].float(), -1)
            logps += steps.gather(-1, torch.tensor(ids[1:], device=self.device)[:, None])[:, 0].tolist()
        return logps, _cache_of(out), out.logits[0, -1]

    def decode(self, past, last_logits, number: str, words: Sequence[str], temperature: float,
               rng: random.Random) -> list[str]:
        """The break chosen at each of the ``len(words) - 1`` boundaries (one of :data:`BREAK_OPTIONS`).

        The scores of single-token options come from the logits already at hand; only a mark of several
        tokens needs a forward pass (on a copy of the cache) to be scored. Then the chosen option's tokens are
        fed once, extending this utterance's own cache: one forward pass per boundary for most tokenizers."""
        import torch

        _, past, last = self._extend(copy.deepcopy(past), last_logits, self._ids(f"{number}. {words[0]}"))
        marks = [self._ids(mark) for mark in BREAK_OPTIONS[1:]]
        breaks = []
        for nxt in words[1:]:
            word = self._ids(f" {nxt}")
            logp = torch.log_softmax(last.float(), -1)
            scores = [float(logp[word[0]])]
            for ids in marks:
                scores.append(float(logp[ids[0]]) if len(ids) == 1
                              else sum(self._extend(copy.deepcopy(past), last, ids)[0]))
            k = choose(scores, temperature, rng)
            breaks.append(BREAK_OPTIONS[k])
            _, past, last = self._extend(past, last, (marks[k - 1] if k else []) + word)
        return breaks


@functools.cache
def _cache_arg() -> str:
    """The forward argument that takes the key/value cache (``cache`` in transformers >= 5.24,
    ``past_key_values`` before)."""
    import inspect

    from transformers import GPT2LMHeadModel

    return "cache" if "cache" in inspect.signature(GPT2LMHeadModel.forward).parameters else "past_key_values"


def _cache_of(out: Any) -> Any:
    return getattr(out, "cache", None) if getattr(out, "cache", None) is not None else out.past_key_values


def annotate(words: Sequence[str], breaks: Sequence[str]) -> str:
    """``w1 / w2 w3 // w4`` from the words and the marks chosen between them."""
    out = [words[0]]
    for mark, word in zip(breaks, words[1:]):
        out.append(f"{mark} {word}")
    return "".join(out)
