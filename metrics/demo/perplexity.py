"""Perplexity in ``kometrics demo``: a causal LM and a masked LM on real KLUE-STS dev sentences."""

from __future__ import annotations

import random

from kometrics.demo import DemoContext, DemoSection
from kometrics.perplexity.api import score, token_surprisals


def _figures(r: dict) -> str:
    return (f"corpus PPL {r['corpus_perplexity']:.1f} | {r['bits_per_token']:.2f} bits/token | "
            f"{r['bits_per_character']:.2f} bits/char | {r['bits_per_byte']:.2f} bits/byte | "
            f"word PPL {r['word_perplexity']:.1f}")


def run(ctx: DemoContext) -> DemoSection:
    from kometrics.datasets_scripts.readers import read_klue_sts

    records = read_klue_sts(ctx.data_dir)
    sentences = ctx.take([r["sentence1"] for r in records], default=120)
    lm, lm_label = ctx.model("gpt2", "skt/kogpt2-base-v2")
    mlm, mlm_label = ctx.model("mlm", "klue/bert-base")
    section = DemoSection(title=f"perplexity: {len(sentences)} KLUE-STS dev sentences")

    causal = score(sentences, lm, batch_size=16)
    section.lines.append(f"causal LM: {lm_label}")
    section.lines.append("  " + _figures(causal))
    section.lines.append(f"  mean of per-sentence PPL {causal['mean_perplexity']:.1f} (evaluate's figure; "
                         "short sentences weigh as much as long ones)")
    order = sorted(range(len(sentences)), key=lambda i: causal["perplexities"][i])
    for tag, i in (("least surprising", order[0]), ("most surprising", order[-1])):
        section.lines.append(f"  {tag}: PPL {causal['perplexities'][i]:.1f}  {sentences[i]}")

    # Word order: the same eojeol shuffled should surprise a trained model more.
    rng = random.Random(0)
    shuffled = []
    for s in sentences:
        words = s.split()
        rng.shuffle(words)
        shuffled.append(" ".join(words))
    mixed = score(shuffled, lm, batch_size=16)
    lower = sum(a < b for a, b in zip(causal["nll_sums"], mixed["nll_sums"]))
    section.lines.append(f"  eojeol shuffled: {mixed['bits_per_character']:.2f} bits/char; the original order "
                         f"scores lower for {lower}/{len(sentences)} sentences")
    pieces = token_surprisals(sentences[order[0]], lm)
    section.lines.append("  surprisal (bits) per token: " + " ".join(f"{p.strip() or '·'}:{b:.1f}" for p, b in pieces))

    few = ctx.take(sentences, default=12)[:12]
    pseudo = score(few, mlm, mode="pseudo", batch_size=64)
    l2r = score(few, mlm, mode="pseudo", pll_variant="word_l2r", batch_size=64)
    section.lines.append(f"masked LM pseudo-perplexity ({len(few)} sentences): {mlm_label}")
    section.lines.append(f"  PLL original: PPPL {pseudo['corpus_perplexity']:.1f}, "
                         f"{pseudo['bits_per_character']:.2f} bits/char")
    section.lines.append(f"  PLL word-l2r: PPPL {l2r['corpus_perplexity']:.1f}, "
                         f"{l2r['bits_per_character']:.2f} bits/char (masks later pieces of the same word too)")
    section.lines.append("Bits per character compare models with different tokenizers; perplexity does not.")
    section.lines += _generations(ctx, sentences, lm, lm_label, section)
    section.results |= {"causal": {k: v for k, v in causal.items() if not isinstance(v, list)},
                       "shuffled_lower": lower,
                       "pseudo": {k: v for k, v in pseudo.items() if not isinstance(v, list)},
                       "pseudo_word_l2r": {k: v for k, v in l2r.items() if not isinstance(v, list)}}
    return section


def _generations(ctx: DemoContext, sentences: list[str], lm: str, lm_label: str, section: DemoSection) -> list[str]:
    """The generations comparison, small: n-grams trained on a subset of KorSTS train + KorNLI at the orders the
    full run chose on its dev split (the card has the full figures: ``kometrics bench generations``)."""
    try:
        import kaldingram  # noqa: F401
        import kenlm  # noqa: F401
        import kiwipiepy  # noqa: F401
    except ModuleNotFoundError as e:
        return [f"n-gram comparison skipped: it needs {e.name} (pip install 'kometrics[ngram]')"]
    from kometrics.bench.generations import CARD_ORDERS, default_lm, format_table, run

    real = default_lm()
    n_train = 5000 if ctx.limit is None else 2000  # fewer leaves modified-KN counts-of-counts at zero
    result = run(data_dir=str(ctx.data_dir), out=ctx.cache_dir / "generations", lm=real or lm, train_limit=n_train,
                 test_limit=len(sentences), char_order=CARD_ORDERS["char"], morpheme_order=CARD_ORDERS["morpheme"],
                 eojeol_order=CARD_ORDERS["eojeol"], speed_sentences=0)
    d = result["data"]
    lines = [f"generations in bits per character: the first {d['test_sentences']} unique KLUE-STS dev sentences; "
             f"n-grams trained on {d['train_sentences']} KorSTS train + KorNLI sentences (a subset; orders fixed "
             "at those the full run chose), causal LM: " + (real or lm_label)]
    lines += format_table(result).splitlines()
    lines.append("bits/char (text) leave </s> out for every model, as the causal LM does; per-token perplexity "
                 "changes with the unit and does not compare. Full figures: metric card, "
                 "'kometrics bench generations'.")
    section.results["generations"] = result["rows"]
    return lines
