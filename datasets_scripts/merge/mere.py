"""MERE (Minimal Expression REplacement) for Korean NLI: variants of a seed problem in which one open-class
word shared by premise and hypothesis is replaced, in both, by a masked-LM suggestion; the label is kept.

Korean specifics
----------------
- Targets are morphemes found with ``kiwipiepy``: nouns (NNG, NNP -> ``NOUN``), verbs (VV -> ``VERB``),
  adjectives (VA -> ``ADJ``) and adverbs (MAG -> ``ADV``), shared by p and h (same form and word class).
- The replaceable unit is the **stem inside an eojeol**; particles and endings stay. The eojeol is rebuilt
  from its morphemes with ``Kiwi.join`` so particles and endings follow the new stem
  (학교가 -> 도서관이, 학교를 -> 집을, 먹었다 -> 잡았다).
- A stem must begin its eojeol (after opening brackets/quotes; ``not_eojeol_initial``); nouns followed by
  a derivational suffix (공부+하다, ``derivation``) or another noun (``compound_noun``) are skipped, as the
  paper skips derivations and compounds. An eojeol that ``Kiwi.join`` does not rebuild exactly is skipped
  (``eojeol_not_reproducible``), so nothing but the stem and its allomorphs ever changes.
- Verb/adjective stems fused with an ending (가+었 -> 갔, 예쁘+ᆫ -> 예쁜) are masked as the fused syllables;
  a filler (왔) stands for the stem that re-analysing the sentence finds with the original endings
  (오+었), else it is rejected (``conjugation_mismatch``); the stem is then scored in p and h at the
  surface it takes there (왔 in 왔다, 와서 in 와서). ``MereOptions(fuse_verbs=False)`` skips such stems
  (``stem_fused_with_ending``).

The masked LM
-------------
A fill-mask scorer is any callable ``scorer(text, start, end, want=(), top_k=30)`` returning
:class:`MaskScores` (the probability of the original at the mask and of the candidates) or a string, the
reason why the span cannot be masked. :class:`MLMFillMask` is the transformers implementation: it replaces
the **one WordPiece token that is exactly the stem** by a single ``[MASK]``; P(o) is that token's
probability at the mask. Originals that are several pieces, or whose token runs past the stem, are not
scored (``original_multi_piece``, ``span_not_aligned``): this follows the paper, which did not replace words
split into subwords, and avoids aggregating piece probabilities. Candidates are single tokens too.

Constraints (each rejection is counted under its reason, the first failing one per candidate):
``special_token``, ``subword_piece``, ``punctuation_or_symbol``, ``conjugation_mismatch``,
``same_as_original``,
``below_probability_floor`` (P(r) < floor in p or h), ``not_more_probable_than_original`` (constraint 1:
P(r) > P(o) must hold in the masked p **and** the masked h), ``already_in_sentence`` (constraint 2: r is a
morpheme of p or h), ``rebuild_failed`` (``Kiwi.join`` gives no single eojeol), ``word_class_changed``
(constraint 3: re-tagging the new p and h must give r with o's word class at the replaced positions).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "WORD_CLASSES",
    "MaskScores",
    "FillMaskScorer",
    "MLMFillMask",
    "MereOptions",
    "Seed",
    "Target",
    "find_targets",
    "generate_variants",
    "word_class",
    "scripted_scorer",
]

#: kiwipiepy tags (before any "-I"/"-R" irregularity suffix) -> the word class recorded in the data.
WORD_CLASSES: dict[str, str] = {"NNG": "NOUN", "NNP": "NOUN", "VV": "VERB", "VA": "ADJ", "MAG": "ADV"}

_EOJEOL = re.compile(r"\S+")
#: Tags that may precede a stem in its eojeol: opening brackets and quotes (not numbers: 10층 is skipped).
_OPENING = {"SSO", "SS"}


def word_class(tag: str) -> str | None:
    """``'NOUN'``, ``'VERB'``, ``'ADJ'``, ``'ADV'`` or ``None`` for a kiwipiepy tag (``'VA-I'`` -> ``'ADJ'``)."""
    return WORD_CLASSES.get(tag.split("-")[0])


@dataclass(frozen=True)
class MaskScores:
    """What a fill-mask scorer says about one masked span: P(original) and P(candidate) for its top-k
    candidates plus any requested ones (raw token strings: ``##`` pieces and punctuation included; the
    generator filters them)."""

    original: float
    candidates: dict[str, float]


class FillMaskScorer(Protocol):
    def __call__(self, text: str, start: int, end: int, want: Sequence[str] = (),
                 top_k: int = 30) -> MaskScores | str: ...


@dataclass(frozen=True)
class Seed:
    seed_id: str
    premise: str
    hypothesis: str
    label: int


@dataclass(frozen=True)
class Occurrence:
    """One occurrence of a target in a sentence: its char span and the eojeol it sits in."""

    start: int
    end: int  # end of the masked span: the stem, plus the syllables it shares with an ending when fused
    eojeol_start: int
    eojeol_end: int
    morphemes: tuple[tuple[str, str], ...]  # the eojeol's (form, tag) morphemes
    index: int  # the target's index among them
    eojeol: str = ""  # the eojeol as written
    fused: bool = False  # the stem shares syllables with its ending (갔다 = 가 + 었 + 다)


@dataclass(frozen=True)
class Target:
    form: str
    tag: str
    word_class: str
    premise: tuple[Occurrence, ...]
    hypothesis: tuple[Occurrence, ...]


@dataclass
class MereOptions:
    """Generation options. ``probability_floor``: candidates with P(r) below it (in p or h) are dropped;
    ``top_k``: candidates asked from the MLM per masked sentence; ``max_variants_per_target``: keep at most
    this many replacements per target word (the most probable, by min(P_p(r), P_h(r))); ``fuse_verbs``:
    also replace verb/adjective stems fused with their ending (갔다, 예쁜), masking the fused syllables."""

    top_k: int = 30
    probability_floor: float = 1e-3
    max_variants_per_target: int | None = None
    word_classes: tuple[str, ...] = ("NOUN", "VERB", "ADJ", "ADV")
    fuse_verbs: bool = True


def _eojeol_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _EOJEOL.finditer(text)]


def _analyse(kiwi, text: str) -> list[tuple[Any, int, int]]:
    """Kiwi tokens of ``text`` with the span of the eojeol each sits in."""
    spans = _eojeol_spans(text)
    out = []
    j = 0
    for tok in kiwi.tokenize(text):
        while j < len(spans) and spans[j][1] <= tok.start:
            j += 1
        a, b = spans[min(j, len(spans) - 1)]
        out.append((tok, a, b))
    return out


def _occurrences(kiwi, text: str, analysed, form: str, cls: str, counts: Counter,
                 fuse_verbs: bool = True) -> tuple[Occurrence, ...] | None:
    occ = []
    for i, (tok, a, b) in enumerate(analysed):
        if tok.form != form or word_class(tok.tag) != cls:
            continue
        same = [(k, t) for k, (t, ea, _) in enumerate(analysed) if ea == a]
        idx = [k for k, _ in same].index(i)
        before = [t for _, t in same[:idx]]
        after = [t for _, t in same[idx + 1:]]
        if any(t.tag not in _OPENING for t in before):
            counts["not_eojeol_initial"] += 1
            return None
        if cls == "NOUN" and after and after[0].tag.startswith("XS") and after[0].tag != "XSN":
            counts["derivation"] += 1
            return None
        if cls == "NOUN" and after and (after[0].tag.startswith("NN") or after[0].tag == "XR"):
            counts["compound_noun"] += 1
            return None
        end = tok.start + tok.len
        fused = text[tok.start:end] != form or any(t.start < end for t in after)
        if fused:
            if cls == "NOUN" or cls == "ADV" or not fuse_verbs:
                counts["stem_fused_with_ending"] += 1
                return None
            for t in after:  # the masked span runs to the end of the last syllable shared with the stem
                if t.start < end:
                    end = max(end, t.start + t.len)
        morphemes = tuple((t.form, t.tag) for _, t in same)
        if _join(kiwi, morphemes) != text[a:b]:
            counts["eojeol_not_reproducible"] += 1
            return None
        occ.append(Occurrence(tok.start, end, a, b, morphemes, idx, text[a:b], fused))
    return tuple(occ)


def _join(kiwi, morphemes: Iterable[tuple[str, str]]) -> str:
    return kiwi.join([(f, t, False) for f, t in morphemes])


def find_targets(kiwi, premise: str, hypothesis: str, counts: Counter | None = None,
                 word_classes: Sequence[str] = ("NOUN", "VERB", "ADJ", "ADV"),
                 fuse_verbs: bool = True) -> list[Target]:
    """Open-class words (same form and word class) found in both p and h, in order of appearance in p.

    Structural skips are counted in ``counts`` (``not_eojeol_initial``, ``derivation``, ``compound_noun``,
    ``stem_fused_with_ending``, ``eojeol_not_reproducible``). Verb/adjective stems fused with an ending
    (갔다) are kept when ``fuse_verbs`` (their masked span is the fused syllables), else skipped."""
    counts = Counter() if counts is None else counts
    ap, ah = _analyse(kiwi, premise), _analyse(kiwi, hypothesis)
    in_h = {(t.form, word_class(t.tag)) for t, _, _ in ah}
    seen = set()
    targets = []
    for tok, _, _ in ap:
        cls = word_class(tok.tag)
        key = (tok.form, cls)
        if cls is None or cls not in word_classes or key in seen or key not in in_h:
            continue
        seen.add(key)
        counts["shared_words"] += 1
        occ_p = _occurrences(kiwi, premise, ap, tok.form, cls, counts, fuse_verbs)
        if occ_p is None:
            continue
        occ_h = _occurrences(kiwi, hypothesis, ah, tok.form, cls, counts, fuse_verbs)
        if occ_h is None:
            continue
        targets.append(Target(tok.form, tok.tag, cls, occ_p, occ_h))
    return targets


def _replace(kiwi, text: str, occurrences: Sequence[Occurrence], replacement: str) -> str | None:
    """``text`` with the stem replaced at every occurrence (eojeols rebuilt with ``Kiwi.join``)."""
    out = text
    for occ in sorted(occurrences, key=lambda o: -o.eojeol_start):
        morphemes = list(occ.morphemes)
        tag = morphemes[occ.index][1].split("-")[0]  # a regular tag: Kiwi.join picks the conjugation
        morphemes[occ.index] = (replacement, tag)
        new = _join(kiwi, morphemes)
        if not new or any(ch.isspace() for ch in new):
            return None
        out = out[:occ.eojeol_start] + new + out[occ.eojeol_end:]
    return out


def _retag_ok(kiwi, text: str, replacement: str, cls: str, n_expected: int) -> bool:
    """Re-tagged, ``text`` has ``replacement`` with word class ``cls`` as the first word-like morpheme of at
    least ``n_expected`` eojeols."""
    firsts: dict[int, Any] = {}
    for tok, a, _ in _analyse(kiwi, text):
        if a not in firsts and not tok.tag.startswith("S"):
            firsts[a] = tok
    found = sum(1 for tok in firsts.values() if tok.form == replacement and word_class(tok.tag) == cls)
    return found >= n_expected


def _is_symbolic(candidate: str) -> bool:
    return any(unicodedata.category(ch)[0] in "PSNZC" for ch in candidate)


def _span_text(kiwi, occ: Occurrence, stem: str) -> str | None:
    """What the masked span of ``occ`` reads with ``stem`` in place of the original (the stem itself unless
    fused: then the fused syllables, from ``Kiwi.join``: 가 -> 오 in 갔다 gives 왔)."""
    if not occ.fused:
        return stem
    morphemes = list(occ.morphemes)
    morphemes[occ.index] = (stem, morphemes[occ.index][1].split("-")[0])
    new = _join(kiwi, morphemes)
    pre, post = occ.start - occ.eojeol_start, occ.eojeol_end - occ.end
    if not new.startswith(occ.eojeol[:pre]) or (post and not new.endswith(occ.eojeol[-post:])):
        return None
    mid = new[pre:len(new) - post]
    return mid or None


def _stem_of(kiwi, text: str, occ: Occurrence, surface: str, cls: str) -> str | None:
    """The stem a filler of the masked span stands for: the filler itself unless the stem is fused; then
    the sentence with the filler is re-analysed (in context: 왔다 alone reads as an auxiliary) and its eojeol
    must be (a stem of class ``cls``) + the original's endings."""
    if not occ.fused:
        return surface
    new_text = text[:occ.start] + surface + text[occ.end:]
    a, b = occ.eojeol_start, occ.eojeol_end + len(surface) - (occ.end - occ.start)
    got = [(t.form, t.tag.split("-")[0]) for t in kiwi.tokenize(new_text) if a <= t.start < b]
    while got and got[0][1] in _OPENING:
        got.pop(0)
    tail = [(f, t.split("-")[0]) for f, t in occ.morphemes[occ.index + 1:]]
    if len(got) == len(tail) + 1 and word_class(got[0][1]) == cls and got[1:] == tail:
        return got[0][0]
    return None


def _surface_reason(candidate: str) -> str | None:
    if (candidate.startswith("[") and candidate.endswith("]")) or (candidate.startswith("<") and candidate.endswith(">")):
        return "special_token"
    if candidate.startswith("##"):
        return "subword_piece"
    if not candidate or _is_symbolic(candidate):
        return "punctuation_or_symbol"
    return None


def generate_variants(seed: Seed, scorer: FillMaskScorer, kiwi, options: MereOptions | None = None,
                      counts: Counter | None = None, lm_name: str = "") -> list[dict[str, Any]]:
    """The variant rows of one seed (see the dataset card for the fields); rejections go to ``counts``.

    Candidates are the LM's top-k fillers of the masked stem in p and in h, mapped to stems (a filler of a
    fused span such as 왔 stands for the stem 오 when the re-analysed eojeol keeps the original endings,
    else ``conjugation_mismatch``). Each stem r is then scored in both sentences at the span text it gives
    there, and must pass every filter and constraint in both.

    A scorer with a ``sentence_logprob(text)`` method (a causal LM, :class:`.causal.CausalLMScorer`) decides
    constraint 1 on whole sentences instead: log P(variant p) > log P(p) and log P(variant h) > log P(h)."""
    options = options or MereOptions()
    sentence_logprob = getattr(scorer, "sentence_logprob", None)
    kind = "causal" if sentence_logprob is not None else "masked"
    seed_lp = (sentence_logprob(seed.premise), sentence_logprob(seed.hypothesis)) if sentence_logprob else None
    counts = Counter() if counts is None else counts
    rows: list[dict[str, Any]] = []
    morphemes_in_pair = {t.form for t in kiwi.tokenize(seed.premise)} | {t.form for t in kiwi.tokenize(seed.hypothesis)}
    targets = find_targets(kiwi, seed.premise, seed.hypothesis, counts, options.word_classes, options.fuse_verbs)
    for target in targets:
        counts["targets"] += 1
        op, oh = target.premise[0], target.hypothesis[0]
        first_p = scorer(seed.premise, op.start, op.end, (), options.top_k)
        first_h = scorer(seed.hypothesis, oh.start, oh.end, (), options.top_k)
        reason = first_p if isinstance(first_p, str) else first_h if isinstance(first_h, str) else None
        if reason is not None:
            counts[reason] += 1
            continue
        # proposals: stem (or, for a rejected filler, the filler) -> best probability and first reason
        best: dict[str, float] = {}
        why_not: dict[str, str | None] = {}
        for text, occ, scores in ((seed.premise, op, first_p), (seed.hypothesis, oh, first_h)):
            for filler, prob in scores.candidates.items():
                why = _surface_reason(filler)
                key = filler
                if why is None:
                    stem = _stem_of(kiwi, text, occ, filler, target.word_class)
                    if stem is None:
                        why = "conjugation_mismatch"
                    else:
                        key = stem
                best[key] = max(best.get(key, 0.0), prob)
                if why_not.get(key, "unset") is not None:
                    why_not[key] = why
        ordered = sorted(best, key=lambda k: (-best[k], k))
        spans = {k: (_span_text(kiwi, op, k), _span_text(kiwi, oh, k)) for k in ordered if why_not[k] is None}
        sp = scorer(seed.premise, op.start, op.end, [a for a, _ in spans.values() if a], options.top_k)
        sh = scorer(seed.hypothesis, oh.start, oh.end, [b for _, b in spans.values() if b], options.top_k)
        accepted = []
        for cand in ordered:
            counts["candidates"] += 1
            why = why_not[cand]
            pp = ph = 0.0
            if why is None:
                span_p, span_h = spans[cand]
                pp = sp.candidates.get(span_p, 0.0) if span_p else 0.0
                ph = sh.candidates.get(span_h, 0.0) if span_h else 0.0
                if span_p is None or span_h is None:
                    why = "rebuild_failed"
                elif cand == target.form:
                    why = "same_as_original"
                elif _surface_reason(cand) is not None:
                    why = _surface_reason(cand)
                elif min(pp, ph) < options.probability_floor:
                    why = "below_probability_floor"
                elif sentence_logprob is None and not (pp > sp.original and ph > sh.original):
                    why = "not_more_probable_than_original"
                elif cand in morphemes_in_pair:
                    why = "already_in_sentence"
                else:
                    new_p = _replace(kiwi, seed.premise, target.premise, cand)
                    new_h = _replace(kiwi, seed.hypothesis, target.hypothesis, cand)
                    lps = None
                    if new_p is None or new_h is None:
                        why = "rebuild_failed"
                    elif sentence_logprob is not None and not (
                            (lps := (sentence_logprob(new_p), sentence_logprob(new_h)))[0] > seed_lp[0]
                            and lps[1] > seed_lp[1]):
                        why = "not_more_probable_than_original"
                    elif not (_retag_ok(kiwi, new_p, cand, target.word_class, len(target.premise))
                              and _retag_ok(kiwi, new_h, cand, target.word_class, len(target.hypothesis))):
                        why = "word_class_changed"
            if why is not None:
                counts[f"rejected:{why}"] += 1
                continue
            accepted.append((min(pp, ph), cand, new_p, new_h, pp, ph, lps))
        accepted.sort(key=lambda a: (-a[0], a[1]))
        if options.max_variants_per_target is not None:
            counts["rejected:over_max_variants_per_target"] += max(0, len(accepted) - options.max_variants_per_target)
            accepted = accepted[:options.max_variants_per_target]
        for _, cand, new_p, new_h, pp, ph, lps in accepted:
            counts["variants"] += 1
            rows.append({
                "seed_id": seed.seed_id,
                "variant_id": f"{seed.seed_id}-v{len(rows) + 1:03d}",
                "is_seed": False,
                "premise": new_p,
                "hypothesis": new_h,
                "label": seed.label,
                "word_class": target.word_class,
                "tag": target.tag,
                "original": target.form,
                "replacement": cand,
                "p_original_premise": sp.original,
                "p_replacement_premise": pp,
                "p_original_hypothesis": sh.original,
                "p_replacement_hypothesis": ph,
                "logp_seed_premise": seed_lp[0] if seed_lp else None,
                "logp_variant_premise": lps[0] if lps else None,
                "logp_seed_hypothesis": seed_lp[1] if seed_lp else None,
                "logp_variant_hypothesis": lps[1] if lps else None,
                "source_lm": lm_name,
                "source_kind": kind,
            })
    return rows


@dataclass
class MLMFillMask:
    """Fill-mask scores from a transformers masked LM (e.g. ``"klue/bert-base"``).

    One ``[MASK]`` replaces the one token that is exactly ``text[start:end]``; its softmax gives P(o) (the
    original token) and the candidates. Forward passes are cached per (text, span), so asking again with
    ``want`` (the other sentence's candidates) costs no model call.
    """

    model_name_or_path: str
    device: str | None = None
    max_length: int = 512
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        from kometrics.perplexity.model_setup import resolve_device

        self.tokenizer = AutoTokenizer.from_pretrained(self.model_name_or_path)
        if not getattr(self.tokenizer, "is_fast", False):
            raise ValueError(f"{self.model_name_or_path}: a fast tokenizer (offsets) is needed")
        if self.tokenizer.mask_token_id is None:
            raise ValueError(f"{self.model_name_or_path}: the tokenizer has no mask token; pass a masked LM")
        self.device = resolve_device(self.device)  # the metrics' spellings: None/"auto", "gpu", "cuda:1" ...
        self.model = AutoModelForMaskedLM.from_pretrained(self.model_name_or_path).to(self.device).eval()

    def _probs(self, text: str, start: int, end: int):
        key = (text, start, end)
        if key in self._cache:
            return self._cache[key]
        import torch

        enc = self.tokenizer(text, return_offsets_mapping=True, truncation=True, max_length=self.max_length,
                             return_tensors="pt")
        offsets = enc.pop("offset_mapping")[0].tolist()
        hit = [i for i, (a, b) in enumerate(offsets) if b > a and a < end and b > start]
        if not hit:
            out = "span_truncated"
        elif len(hit) > 1:
            out = "original_multi_piece"
        elif tuple(offsets[hit[0]]) != (start, end):
            out = "span_not_aligned"
        else:
            i = hit[0]
            ids = enc["input_ids"].clone()
            original_id = int(ids[0, i])
            ids[0, i] = self.tokenizer.mask_token_id
            with torch.no_grad():
                logits = self.model(input_ids=ids.to(self.device),
                                    attention_mask=enc["attention_mask"].to(self.device)).logits[0, i]
            out = (torch.softmax(logits.float(), -1).cpu(), original_id)
        self._cache[key] = out
        return out

    def __call__(self, text: str, start: int, end: int, want: Sequence[str] = (), top_k: int = 30) -> MaskScores | str:
        got = self._probs(text, start, end)
        if isinstance(got, str):
            return got
        probs, original_id = got
        values, ids = probs.topk(top_k)
        tokens = self.tokenizer.convert_ids_to_tokens(ids.tolist())
        cands = dict(zip(tokens, values.tolist()))
        unk = self.tokenizer.unk_token_id
        for w in want:
            if w not in cands:
                tid = self.tokenizer.convert_tokens_to_ids(w)
                if tid is not None and tid != unk:
                    cands[w] = float(probs[tid])
        return MaskScores(float(probs[original_id]), cands)


def scripted_scorer(script: dict[tuple[str, str], dict[str, float]], original_key: str = "<original>") -> Callable:
    """A scorer from a table: ``{(sentence, masked_text): {"<original>": P(o), candidate: P(r), ...}}``.

    For tests and demos of the constraints without a model; a (sentence, span) missing from the table is
    reported as ``"span_not_scripted"``."""

    def scorer(text: str, start: int, end: int, want: Sequence[str] = (), top_k: int = 30) -> MaskScores | str:
        table = script.get((text, text[start:end]))
        if table is None:
            return "span_not_scripted"
        cands = {k: v for k, v in table.items() if k != original_key}
        top = dict(sorted(cands.items(), key=lambda kv: -kv[1])[:top_k])
        for w in want:
            if w in cands:
                top[w] = cands[w]
        return MaskScores(table[original_key], top)

    return scorer
