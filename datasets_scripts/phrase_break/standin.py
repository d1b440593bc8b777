"""A deterministic local stand-in for the LLM of the reference builder (demo and tests only).

It is **not** a language model and knows nothing about prosody: for each utterance of a prompt it picks
one of the annotations of the phrase-break corpus's rule strategies (weighted, seeded by the prompt's
few-shot examples, so re-sampled few-shot sets give different picks, as with a real LLM at temperature 0),
flips a few boundaries at random (``noise``), and now and then answers with a word dropped
(``error_rate``), which the builder must discard. References it yields only show that the pipeline works.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path

from kometrics.cli.io import read_jsonl
from kometrics.lmre.formats import Annotation, format_annotation, parse_annotation

__all__ = ["StandInLLM", "DEFAULT_WEIGHTS"]

#: How often each corpus strategy is picked (the better-informed strategies more often).
DEFAULT_WEIGHTS = {"rule": 0.4, "dependency": 0.4, "comma": 0.1, "length": 0.1}
_FLIP = {0: (1,), 1: (0, 2), 2: (1,)}


class StandInLLM:
    """``llm(messages, temperature) -> str`` answering ``<k>. <annotation>`` lines, deterministically."""

    def __init__(self, candidates: Mapping[str, Sequence[tuple[str, str]]], weights: Mapping[str, float] | None = None,
                 noise: float = 0.05, error_rate: float = 0.02, seed: int = 0) -> None:
        self.candidates = {k: list(v) for k, v in candidates.items()}
        self.weights = dict(weights or DEFAULT_WEIGHTS)
        self.noise, self.error_rate, self.seed = noise, error_rate, seed
        self.name = f"stand-in(noise={noise:g},errors={error_rate:g},seed={seed})"

    @classmethod
    def from_corpus(cls, folder: str | os.PathLike, **kwargs) -> StandInLLM:
        """Candidates from ``annotations.jsonl`` of a corpus built by ``phrase_break.build``."""
        cands: dict[str, list[tuple[str, str]]] = {}
        for rec in read_jsonl(Path(folder) / "annotations.jsonl"):
            cands.setdefault(" ".join(rec["words"]), []).append((rec["strategy"], rec["annotation"]))
        return cls(cands, **kwargs)

    def _annotate(self, text: str, rng: random.Random) -> str:
        words = tuple(text.split())
        options = self.candidates.get(text) or [("none", text)]
        weights = [self.weights.get(s, 0.05) for s, _ in options]
        ann = parse_annotation(rng.choices([a for _, a in options], weights=weights)[0])
        breaks = [rng.choice(_FLIP[c]) if rng.random() < self.noise else c for c in ann.breaks]
        out = format_annotation(Annotation(words, tuple(breaks)))
        if rng.random() < self.error_rate and len(words) > 2:
            out = out.split(" ", 1)[1]  # drop the first word: an answer the builder must discard
        return out

    def __call__(self, messages: list[dict[str, str]], temperature: float = 0.0) -> str:
        user = messages[-1]["content"]
        head, _, tail = user.partition("Annotate these")
        salt = hashlib.sha256(f"{self.seed}|{temperature}|{head}".encode()).hexdigest()
        lines = []
        for line in tail.splitlines()[1:]:
            number, _, text = line.partition(". ")
            if number.strip().isdigit():
                rng = random.Random(f"{salt}|{text}")
                lines.append(f"{number.strip()}. {self._annotate(text, rng)}")
        return "\n".join(lines)
