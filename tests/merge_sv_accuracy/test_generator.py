"""MERE for Korean: each constraint decides with a scripted fill-mask scorer; stems are replaced inside the
eojeol with particles/endings rebuilt; the tiny MLM builds a loadable, deterministic dataset folder."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from kometrics.datasets_scripts.merge import (
    MereOptions,
    MLMFillMask,
    Seed,
    apply_review,
    export_review_csv,
    find_targets,
    generate_variants,
    read_jsonl,
    read_review_csv,
    read_seeds,
    sample_variants,
    scripted_scorer,
)

P, H = "나는 학교에 갔다.", "학교가 크다."


def run(kiwi, cands_p, cands_h, orig_p=0.2, orig_h=0.1, premise=P, hypothesis=H, masked="학교", **options):
    script = {(premise, masked): {"<original>": orig_p, **cands_p},
              (hypothesis, masked): {"<original>": orig_h, **cands_h}}
    counts = Counter()
    rows = generate_variants(Seed("s1", premise, hypothesis, 2), scripted_scorer(script), kiwi,
                             MereOptions(**options), counts, lm_name="scripted")
    return rows, counts


def test_accepted_noun_keeps_particles_with_allomorphs(kiwi):
    rows, counts = run(kiwi, {"도서관": 0.5}, {"도서관": 0.4})
    assert [(r["premise"], r["hypothesis"]) for r in rows] == [("나는 도서관에 갔다.", "도서관이 크다.")]
    row = rows[0]
    assert (row["word_class"], row["tag"], row["original"], row["replacement"], row["label"]) == (
        "NOUN", "NNG", "학교", "도서관", 2)
    assert (row["p_original_premise"], row["p_replacement_premise"]) == (0.2, 0.5)
    assert (row["p_original_hypothesis"], row["p_replacement_hypothesis"]) == (0.1, 0.4)
    assert row["variant_id"] == "s1-v001" and row["is_seed"] is False and row["source_lm"] == "scripted" and row["source_kind"] == "masked"
    assert counts["variants"] == 1 and counts["targets"] == 1


@pytest.mark.parametrize("cand_p, cand_h, reason", [
    ({"집": 0.1}, {"집": 0.5}, "not_more_probable_than_original"),   # (1) fails in the premise only
    ({"회사": 0.3}, {"회사": 0.05}, "not_more_probable_than_original"),  # (1) fails in the hypothesis only
    ({"회사": 0.3}, {}, "not_more_probable_than_original"),  # never proposed in h: P_h(r) = 0
    ({"나": 0.6}, {"나": 0.6}, "already_in_sentence"),  # (2) 나 is a morpheme of the premise
    ({"예쁘": 0.4}, {"예쁘": 0.4}, "word_class_changed"),  # (3) re-tagging does not give a noun 예쁘
    ({"##관": 0.5}, {"##관": 0.5}, "subword_piece"),
    ({".": 0.5}, {".": 0.5}, "punctuation_or_symbol"),
    ({"3": 0.5}, {"3": 0.5}, "punctuation_or_symbol"),
    ({"[UNK]": 0.9}, {"[UNK]": 0.9}, "special_token"),
    ({"학교": 0.9}, {"학교": 0.9}, "same_as_original"),
    ({"도서관": 0.0005}, {"도서관": 0.5}, "below_probability_floor"),
])
def test_each_constraint_decides(kiwi, cand_p, cand_h, reason):
    rows, counts = run(kiwi, cand_p, cand_h, orig_p=0.0001, orig_h=0.0001)
    if reason == "not_more_probable_than_original":
        rows, counts = run(kiwi, cand_p, cand_h, probability_floor=0.0)
    assert rows == []
    assert counts[f"rejected:{reason}"] == 1
    assert sum(v for k, v in counts.items() if k.startswith("rejected:")) == 1
    # the same candidate passes once the deciding condition is lifted (control)
    if reason == "below_probability_floor":
        assert len(run(kiwi, cand_p, cand_h, orig_p=0.0001, orig_h=0.0001, probability_floor=1e-4)[0]) == 1


def test_verb_and_adjective_are_reconjugated(kiwi):
    p, h = "철수가 사과를 먹었다.", "철수는 사과를 빨리 먹었다."
    rows, counts = run(kiwi, {"잡": 0.5}, {"잡": 0.5}, premise=p, hypothesis=h, masked="먹")
    assert [(r["premise"], r["hypothesis"], r["word_class"]) for r in rows] == [
        ("철수가 사과를 잡았다.", "철수는 사과를 빨리 잡았다.", "VERB")]
    p, h = "날씨가 좋다.", "날씨가 좋고 맑다."
    rows, _ = run(kiwi, {"나쁘": 0.5}, {"나쁘": 0.5}, premise=p, hypothesis=h, masked="좋")
    assert [(r["premise"], r["hypothesis"], r["word_class"]) for r in rows] == [
        ("날씨가 나쁘다.", "날씨가 나쁘고 맑다.", "ADJ")]


def test_structural_skips_are_counted(kiwi):
    counts = Counter()
    # 공부+하다 (derivation); 가+었 -> 갔 (a stem fused with its ending) is skipped only on request
    targets = find_targets(kiwi, "그는 공부했다. 그는 학교에 갔다.", "그는 공부했고 학교에 갔다.", counts,
                           fuse_verbs=False)
    assert counts["derivation"] == 1 and counts["stem_fused_with_ending"] == 1
    assert [t.form for t in targets] == ["학교"]
    targets = find_targets(kiwi, "그는 학교에 갔다.", "그는 학교에 갔다.")
    fused = [t for t in targets if t.word_class == "VERB"]
    assert [(t.form, t.premise[0].fused, t.premise[0].start, t.premise[0].end) for t in fused] == [("가", True, 7, 8)]
    counts = Counter()
    find_targets(kiwi, "건물사람들만 이용한다.", "건물사람들은 이용한다.", counts)
    assert counts["compound_noun"] == 1
    counts = Counter()
    find_targets(kiwi, "10층에 있다.", "10층에 없다.", counts)  # a stem after digits is not word-initial
    assert counts["not_eojeol_initial"] == 1  # counted once per target (p decides first)


def test_fused_verb_and_adjective_stems(kiwi):
    """The masked span of a fused stem is its syllables (갔, 가서, 예쁜, 예뻤); a filler stands for the stem
    that re-analysis finds with the original endings, and is scored in each sentence at its own surface."""
    p, h = "그는 학교에 갔다.", "그는 학교에 가서 공부했다."
    script = {(p, "갔"): {"<original>": 0.1, "왔": 0.5, "먹": 0.6},
              (h, "가서"): {"<original>": 0.1, "와서": 0.4}}
    counts = Counter()
    rows = generate_variants(Seed("v", p, h, 0), scripted_scorer(script), kiwi, MereOptions(), counts)
    assert [(r["premise"], r["hypothesis"], r["original"], r["replacement"], r["word_class"]) for r in rows] == [
        ("그는 학교에 왔다.", "그는 학교에 와서 공부했다.", "가", "오", "VERB")]
    assert (rows[0]["p_replacement_premise"], rows[0]["p_replacement_hypothesis"]) == (0.5, 0.4)
    assert counts["rejected:conjugation_mismatch"] == 1  # 먹다 has lost the past tense of 갔다
    assert counts["span_not_scripted"] == 1  # the noun 학교 (not in the script)
    p, h = "예쁜 꽃이 있다.", "그 꽃이 예뻤다."
    script = {(p, "예쁜"): {"<original>": 0.1, "귀여운": 0.5},
              (h, "예뻤"): {"<original>": 0.1, "귀여웠": 0.3}}
    rows = generate_variants(Seed("a", p, h, 1), scripted_scorer(script), kiwi, MereOptions())
    assert [(r["premise"], r["hypothesis"], r["replacement"], r["word_class"]) for r in rows] == [
        ("귀여운 꽃이 있다.", "그 꽃이 귀여웠다.", "귀엽", "ADJ")]
    # the stem must win in BOTH sentences at its own surface
    script[(h, "예뻤")]["귀여웠"] = 0.05
    assert generate_variants(Seed("a", p, h, 1), scripted_scorer(script), kiwi, MereOptions()) == []


def test_every_occurrence_is_replaced_and_the_first_is_scored(kiwi):
    p, h = "학교와 학교 사이에 길이 있다.", "학교가 크다."
    rows, _ = run(kiwi, {"도서관": 0.5}, {"도서관": 0.5}, premise=p, hypothesis=h)
    assert [r["premise"] for r in rows] == ["도서관과 도서관 사이에 길이 있다."]


def test_unscoreable_span_is_counted(kiwi):
    counts = Counter()
    rows = generate_variants(Seed("s", P, H, 0), scripted_scorer({}), kiwi, MereOptions(), counts)
    assert rows == [] and counts["span_not_scripted"] == 1


def test_max_variants_and_order_are_deterministic(kiwi):
    cands = {"도서관": 0.5, "회사": 0.6, "병원": 0.7}
    rows, counts = run(kiwi, cands, cands, max_variants_per_target=2)
    assert [r["replacement"] for r in rows] == ["병원", "회사"]  # by min(P_p, P_h), highest first
    assert counts["rejected:over_max_variants_per_target"] == 1
    assert rows == run(kiwi, cands, cands, max_variants_per_target=2)[0]


def test_sample_variants_is_seeded_and_order_free():
    rows = []
    for s in range(5):
        rows.append({"seed_id": f"s{s}", "is_seed": True})
        rows += [{"seed_id": f"s{s}", "is_seed": False, "variant_id": f"s{s}-{v}"} for v in range(s + 1)]
    a = sample_variants(rows, 2, sample_seed=0)
    assert a == sample_variants(rows, 2, sample_seed=0)
    assert sum(r["is_seed"] for r in a) == 5
    per_seed = Counter(r["seed_id"] for r in a if not r["is_seed"])
    assert per_seed == {"s0": 1, "s1": 2, "s2": 2, "s3": 2, "s4": 2}
    # the draw of a seed does not depend on the other seeds or the row order
    b = sample_variants(list(reversed(rows)), 2, sample_seed=0)
    assert {r.get("variant_id") for r in a} == {r.get("variant_id") for r in b}
    assert any(sample_variants(rows, 2, sample_seed=s) != a for s in range(1, 6))
    with pytest.raises(ValueError, match="k must be"):
        sample_variants(rows, 0)


def test_read_seeds_sources(tmp_path, data_dir):
    klue = read_seeds("klue", data_dir=data_dir, limit=5)
    assert len(klue) == 5 and all(s.label in (0, 1, 2) for s in klue) and klue[0].seed_id.startswith("klue-nli")
    kornli = read_seeds("kornli", data_dir=data_dir, limit=5)
    assert kornli[0].seed_id == "xnli-dev-ko-0"
    f = tmp_path / "seeds.jsonl"
    f.write_text(json.dumps({"premise": "a", "hypothesis": "b", "label": "neutral"}) + "\n"
                 + json.dumps({"premise": "c", "hypothesis": "d", "label": 2, "id": "x"}) + "\n", encoding="utf-8")
    assert [(s.seed_id, s.label) for s in read_seeds(f)] == [("seeds-0", 1), ("x", 2)]
    f.write_text(json.dumps({"premise": "a", "hypothesis": "b", "label": "maybe"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="row 0: unknown label 'maybe'"):
        read_seeds(f)
    with pytest.raises(FileNotFoundError):
        read_seeds(tmp_path / "nope.csv")


def test_mlm_scores_match_a_fill_mask_pipeline(tiny_bert):
    """Independent check of P(o) and P(r): where the stem is a whole word the masked text tokenizes the
    same, so transformers' fill-mask pipeline must give the same probabilities."""
    from transformers import pipeline

    scorer = MLMFillMask(tiny_bert, device="cpu")
    text = "나는 학교 앞에 갔다."
    assert "사람" in scorer.tokenizer.get_vocab() and "학교" in scorer.tokenizer.get_vocab()
    got = scorer(text, 3, 5, want=("사람",), top_k=5)
    assert not isinstance(got, str), got
    fill = pipeline("fill-mask", model=tiny_bert, device="cpu")
    ref = {d["token_str"]: d["score"] for d in fill("나는 [MASK] 앞에 갔다.", targets=["학교", "사람"])}
    assert got.original == pytest.approx(ref["학교"], rel=1e-4)
    assert got.candidates["사람"] == pytest.approx(ref["사람"], rel=1e-4)
    top = fill("나는 [MASK] 앞에 갔다.", top_k=5)
    assert [d["token_str"] for d in top] == [t for t in list(got.candidates)[:5]]
    assert scorer(text, 3, 4) == "span_not_aligned"  # half a token


def test_tiny_mlm_dataset_folder(tiny_merge_dir, klue_seeds, tmp_path):
    import datasets

    out, stats = tiny_merge_dir
    rows = read_jsonl(out / "data" / "all.jsonl")
    var = read_jsonl(out / "data" / "var.jsonl")
    seeds = {s.seed_id: s for s in klue_seeds}
    assert [r["seed_id"] for r in rows if r["is_seed"]] == list(seeds)
    variants = [r for r in rows if not r["is_seed"]]
    assert variants, stats["counts"]
    assert stats["counts"]["variants"] == len(variants) == stats["variants_all"]
    for r in variants:
        s = seeds[r["seed_id"]]
        assert r["label"] == s.label and r["word_class"] in ("NOUN", "VERB", "ADJ", "ADV")
        assert r["p_replacement_premise"] > r["p_original_premise"]
        assert r["p_replacement_hypothesis"] > r["p_original_hypothesis"]
        for new, old in ((r["premise"], s.premise), (r["hypothesis"], s.hypothesis)):
            a, b = new.split(), old.split()
            assert len(a) == len(b)  # same eojeols: only the ones holding the stem changed
            changed = [(x, y) for x, y in zip(a, b) if x != y]
            assert changed and all(y.lstrip("\"'(“[").startswith(r["original"]) for _, y in changed)
            assert all(x.lstrip("\"'(“[").startswith(r["replacement"]) for x, _ in changed)
    assert max(Counter(r["seed_id"] for r in var if not r["is_seed"]).values()) <= 2
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "config_name: var" in card and '"variants":' in card
    ds = datasets.load_dataset(str(out), "var", split="test", cache_dir=str(tmp_path / "hf"))
    assert len(ds) == len(var) and set(ds.column_names) >= {"seed_id", "variant_id", "is_seed", "premise",
                                                           "hypothesis", "label", "word_class", "original",
                                                           "replacement", "p_original_premise"}


def test_same_seed_and_options_give_the_same_files(tiny_merge_dir, tiny_bert, klue_seeds, kiwi, tmp_path):
    from kometrics.datasets_scripts.merge import build_dataset

    out, _ = tiny_merge_dir
    build_dataset(klue_seeds, MLMFillMask(tiny_bert), tmp_path, k=2, sample_seed=0, kiwi=kiwi,
                  options=MereOptions(top_k=30, probability_floor=0.0), lm_name="tiny_bert")
    for name in ("data/all.jsonl", "data/var.jsonl", "stats.json", "README.md"):
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes(), name


def test_review_csv_round_trip(tiny_merge_dir, tmp_path):
    import csv
    import shutil

    src, _ = tiny_merge_dir
    folder = tmp_path / "ds"
    shutil.copytree(src, folder)
    review = tmp_path / "review.csv"
    n = export_review_csv(folder, review)
    with open(review, encoding="utf-8-sig", newline="") as f:
        lines = list(csv.DictReader(f))
    assert len(lines) == n == sum(not r["is_seed"] for r in read_jsonl(folder / "data" / "var.jsonl"))
    answers = ["yes", "no", ""]
    for i, line in enumerate(lines):
        line["validated"] = answers[i % 3]
        line["note"] = "어색함" if i % 3 == 1 else ""
    with open(review, "w", encoding="utf-8-sig", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(lines[0]))
        w.writeheader()
        w.writerows(lines)
    assert set(read_review_csv(review).values()) <= {(True, ""), (False, "어색함"), (None, "")}
    counts = apply_review(folder, review)
    assert counts == {"reviewed": sum(i % 3 != 2 for i in range(n)), "validated": sum(i % 3 == 0 for i in range(n)),
                      "rejected": sum(i % 3 == 1 for i in range(n)), "not_reviewed": sum(i % 3 == 2 for i in range(n))}
    var = {r["variant_id"]: r for r in read_jsonl(folder / "data" / "var.jsonl") if not r["is_seed"]}
    for i, line in enumerate(lines):
        assert var[line["variant_id"]]["validated"] == [True, False, None][i % 3]
    validated = read_jsonl(folder / "data" / "validated.jsonl")
    assert sum(not r["is_seed"] for r in validated) == counts["validated"]
    assert "config_name: validated" in (folder / "README.md").read_text(encoding="utf-8")
    lines[0]["validated"] = "maybe"
    with open(review, "w", encoding="utf-8-sig", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(lines[0]))
        w.writeheader()
        w.writerows(lines)
    with pytest.raises(ValueError, match=r"review.csv:2: validated='maybe'"):
        read_review_csv(review)


def test_cli_generate_review_validate(tiny_bert, data_dir, tmp_path, capsys):
    from kometrics.cli import main

    out = tmp_path / "m"
    assert main(["merge", "generate", "--seeds", "klue", "--mlm", tiny_bert, "--out", str(out), "--limit", "3",
                 "--floor", "0", "--top-k", "10", "--k", "1", "--data-dir", str(data_dir), "--device", "cpu"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["counts"]["seeds"] == 3 and stats["source_lm"] == tiny_bert
    assert main(["merge", "review", "--dataset", str(out), "--out", str(tmp_path / "r.csv")]) == 0
    assert main(["merge", "validate", "--dataset", str(out), "--review", str(tmp_path / "r.csv")]) == 0
    assert '"not_reviewed"' in capsys.readouterr().out
