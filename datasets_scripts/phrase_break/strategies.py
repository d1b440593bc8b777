"""Phrase-break annotation strategies over KLUE-DP sentences (an open, text-only test bed).

Each strategy maps a :class:`~kometrics.datasets_scripts.readers.DPSentence` of ``n`` eojeols to ``n - 1``
boundary codes (0 = NB, 1 = AP, 2 = IP; the utterance end is not annotated, as in ``kometrics.lmre``).
They are deliberately simple and of different quality, like the paper's strategies (rule-based,
comma-based, ...); none of them is a gold standard.

- ``comma``: an IP boundary after a word ending in sentence-internal punctuation (``,`` ``;`` ``:`` or
  ``.?!`` inside the sentence), nothing elsewhere.
- ``rule``: from the KLUE-DP morpheme POS tags of the word's last morpheme (punctuation skipped):
  comma (SP) or connective ending (EC, unless the next word is an auxiliary verb VX) -> IP; case and
  topic particles (JX, JKS, JKB, JKO, JKC, JKV, JKQ, JC) -> AP; everything else (adnominal endings ETM,
  genitive JKG, determiners, bare nouns, ...) -> NB.
- ``length``: AP after the word at which the current phrase reaches ``max_syllables`` (5) Hangul
  syllables; every ``aps_per_ip`` (3) APs the boundary is an IP instead.
- ``dependency``: NB when the word depends on the next word (``head == i + 1``); otherwise IP if the word
  is a predicate (deprel VP*/VNP*: a clause ends) and AP for other words.
"""

from __future__ import annotations

from collections.abc import Callable

from ..readers import DPSentence

__all__ = ["STRATEGIES", "comma_breaks", "rule_breaks", "length_breaks", "dependency_breaks", "length_bucket"]

NB, AP, IP = 0, 1, 2
_PUNCT_TAGS = {"SF", "SP", "SS", "SE", "SO", "SW"}
_AP_TAGS = {"JX", "JKS", "JKB", "JKO", "JKC", "JKV", "JKQ", "JC"}
_INTERNAL_PUNCT = (",", ";", ":", ".", "?", "!", "·")


def length_bucket(n_words: int) -> str:
    """The paper's length categories: ``short`` (< 7 words), ``medium`` (7-10), ``long`` (>= 11)."""
    return "short" if n_words < 7 else ("medium" if n_words <= 10 else "long")


def comma_breaks(sent: DPSentence) -> list[int]:
    """IP after words ending in sentence-internal punctuation."""
    words = sent.words
    return [IP if w.form.rstrip("'\"’”)]").endswith(_INTERNAL_PUNCT) else NB for w in words[:-1]]


def _last_tags(pos: str) -> tuple[str, bool]:
    """(last non-punctuation tag, whether the word ends with a comma-like SP)."""
    tags = pos.split("+")
    comma = tags[-1] == "SP"
    content = [t for t in tags if t not in _PUNCT_TAGS]
    return (content[-1] if content else tags[-1]), comma


def rule_breaks(sent: DPSentence) -> list[int]:
    """Particles and connective endings from the POS tags (see the module docstring)."""
    words = sent.words
    out = []
    for i, w in enumerate(words[:-1]):
        tag, comma = _last_tags(w.pos)
        next_first = words[i + 1].pos.split("+")[0]
        if comma or (tag == "EC" and next_first != "VX"):
            out.append(IP)
        elif tag in _AP_TAGS:
            out.append(AP)
        else:
            out.append(NB)
    return out


def _syllables(form: str) -> int:
    n = sum(1 for ch in form if "\uac00" <= ch <= "\ud7a3")
    return n or len(form)


def length_breaks(sent: DPSentence, max_syllables: int = 5, aps_per_ip: int = 3) -> list[int]:
    """A boundary each time the current phrase reaches ``max_syllables``; every ``aps_per_ip``-th is an IP."""
    out = []
    size, phrases = 0, 0
    for w in sent.words[:-1]:
        size += _syllables(w.form)
        if size >= max_syllables:
            phrases += 1
            out.append(IP if phrases % aps_per_ip == 0 else AP)
            size = 0
        else:
            out.append(NB)
    return out


def dependency_breaks(sent: DPSentence) -> list[int]:
    """NB inside ``word -> next word`` attachments, IP after predicates, AP elsewhere."""
    out = []
    for w in sent.words[:-1]:
        if w.head == w.index + 1:
            out.append(NB)
        elif w.deprel.startswith(("VP", "VNP")):
            out.append(IP)
        else:
            out.append(AP)
    return out


STRATEGIES: dict[str, Callable[[DPSentence], list[int]]] = {
    "comma": comma_breaks,
    "rule": rule_breaks,
    "length": length_breaks,
    "dependency": dependency_breaks,
}
