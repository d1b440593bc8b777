"""The corpus format: builders (ratings file, KLUE-STS, KorSTS), folders that datasets.load_dataset reads."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import pytest
from scipy import stats

from kometrics.datasets_scripts.paraphrase.corpus import (
    FEATURES_YAML,
    Pair,
    build_corpus,
    build_named,
    features,
    load_corpus,
    read_rating_file,
    write_corpus,
)
from kometrics.datasets_scripts.readers import read_klue_sts, read_korsts


def _paper_style_file(tmp_path, data_dir, n=12, suffix=".tsv"):
    """A ratings file in the paper's layout (two raters, 0-6) built from real KorSTS pairs; the ratings are
    derived deterministically from the gold score so that both raters vary."""
    rows = read_korsts("dev", data_dir)[:n]
    path = tmp_path / f"ratings{suffix}"
    sep = "\t" if suffix == ".tsv" else ","
    lines = [sep.join(["id", "reference", "candidate", "rater1", "rater2"])]
    r1, r2 = [], []
    for i, row in enumerate(rows):
        a = min(6, round(row["score"] * 6 / 5))
        b = max(0, a - (i % 3 == 0))
        r1.append(a)
        r2.append(b)
        cells = [f"p{i}", row["sentence1"], row["sentence2"], str(a), str(b)]
        if suffix == ".csv":
            cells = ['"' + c.replace('"', '""') + '"' if ("," in c or '"' in c) else c for c in cells]
        lines.append(sep.join(cells))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, rows, r1, r2


@pytest.mark.parametrize("suffix", [".tsv", ".csv"])
def test_ratings_file_roundtrip_through_datasets(tmp_path, data_dir, suffix):
    import datasets

    path, rows, r1, r2 = _paper_style_file(tmp_path, data_dir, suffix=suffix)
    pairs = read_rating_file(path)
    assert [p.reference for p in pairs] == [r["sentence1"] for r in rows]
    assert [p.candidate for p in pairs] == [r["sentence2"] for r in rows]
    assert all(p.rater_ids == ["rater1", "rater2"] for p in pairs)
    corpus = build_corpus(pairs, name="mine", scale=(0, 6))
    folder = write_corpus(corpus, tmp_path / "corpus")
    ds = datasets.load_dataset(str(folder), split="test")
    assert ds.features == features()
    assert len(ds) == len(rows)
    # human score = mean of the two raters' z-scores (population sd, over all pairs each rater scored)
    expect = (stats.zscore(r1) + stats.zscore(r2)) / 2
    np.testing.assert_allclose(ds["human_score"], expect)
    np.testing.assert_allclose([z for z, _ in ds["z_scores"]], stats.zscore(r1))
    assert ds["rating_mean"] == pytest.approx([(a + b) / 2 for a, b in zip(r1, r2)])
    assert set(ds["scale_max"]) == {6.0}
    meta = json.loads((folder / "corpus.json").read_text(encoding="utf-8"))
    from kometrics.datasets_scripts.paraphrase.ratings import cohen_kappa

    assert meta["agreement"]["cohen_kappa"] == pytest.approx(cohen_kappa(r1, r2, categories=range(7)))
    assert "Cohen's kappa" in (folder / "README.md").read_text(encoding="utf-8")
    again = load_corpus(folder)
    loaded = [{k: ds[i][k] for k in ds.column_names} for i in range(len(ds))]
    for a, b in zip(again.records, loaded):
        assert {k: (v, b[k]) for k, v in a.items() if a[k] != b[k]} == {}


def test_ratings_file_missing_cells_and_errors(tmp_path):
    good = tmp_path / "ok.tsv"
    good.write_text('id\treference\tcandidate\ta\tb\n1\t그는 "왔다"\t그가 왔다\t3\t\n2\t비가 온다\t비가 내린다\t5\t6\n'
                    '3\t눈이 온다\t눈이 내린다\t1\t2\n', encoding="utf-8")
    pairs = read_rating_file(good)
    assert pairs[0].reference == '그는 "왔다"' and pairs[0].rater_ids == ["a"] and pairs[0].ratings == [3.0]
    cases = {
        "id\treference\tcand\ta\n": "lacks column",
        "id\treference\tcandidate\n1\tx\ty\n": "no rater column",
        "id\treference\tcandidate\ta\n1\tx\ty\tfive\n": r"bad.tsv:2: rater 'a' cell 'five' is not a number",
        "id\treference\tcandidate\ta\n1\tx\ty\n": r"bad.tsv:2: 3 cells but the header has 4",
        "id\treference\tcandidate\ta\n1\tx\ty\t\n": "has no rating",
        "id\treference\tcandidate\ta\ta\n1\tx\ty\t1\t2\n": "distinct non-empty headers",
    }
    bad = tmp_path / "bad.tsv"
    for text, message in cases.items():
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=message):
            read_rating_file(bad)


def test_build_corpus_validation():
    ok = Pair("a", "문장 하나", "문장 둘", ["r"], [3.0])
    with pytest.raises(ValueError, match=r"pairs\[1\] \(id 'b'\): rating 7.0 of rater 'r' is outside the scale"):
        build_corpus([ok, Pair("b", "x", "y", ["r"], [7.0])], name="t", scale=(0, 6))
    with pytest.raises(ValueError, match=r"pairs\[1\] \(id 'b'\): candidate is empty"):
        build_corpus([ok, Pair("b", "x", " ", ["r"], [1.0])], name="t", scale=(0, 6))
    with pytest.raises(ValueError, match=r"pairs\[1\]: id 'a' repeats pairs\[0\]"):
        build_corpus([ok, ok], name="t", scale=(0, 6))
    with pytest.raises(ValueError, match="method='score' needs exactly one score"):
        build_corpus([Pair("a", "x", "y", ["r", "s"], [1.0, 2.0])], name="t", scale=(0, 6), method="score")


def test_klue_sts_corpus(klue_corpus, data_dir):
    raw = read_klue_sts(data_dir)
    assert len(klue_corpus) == len(raw) == 519
    first, rec = raw[0], klue_corpus.records[0]
    assert rec["id"] == first["guid"] and rec["reference"] == first["sentence1"]
    assert rec["rater_ids"] == first["annotations"]["annotators"]
    assert rec["ratings"] == [float(v) for v in first["annotations"]["annotations"]]
    # the raw mean of the votes is KLUE's real-label
    np.testing.assert_allclose(klue_corpus.column("rating_mean"), [r["labels"]["real-label"] for r in raw])
    # z of one annotator over every pair that annotator scored, by hand
    who = "12"
    votes = [(i, v) for i, r in enumerate(raw)
             for a, v in zip(r["annotations"]["annotators"], r["annotations"]["annotations"]) if a == who]
    x = np.array([v for _, v in votes], float)
    mean, sd = x.mean(), math.sqrt(((x - x.mean()) ** 2).mean())
    for i, v in votes[:20]:
        k = klue_corpus.records[i]["rater_ids"].index(who)
        assert klue_corpus.records[i]["z_scores"][k] == pytest.approx((v - mean) / sd)
    assert klue_corpus.records[5]["human_score"] == pytest.approx(statistics.mean(klue_corpus.records[5]["z_scores"]))
    a = klue_corpus.meta["agreement"]
    assert a["raters"] == 17 and "cohen_kappa" not in a
    assert 0 < a["krippendorff_alpha_interval"] < 1 and 0 < a["mean_pairwise_pearson"] < 1
    assert klue_corpus.meta["human_score"] == {"method": "z_mean", "ddof": 0, "degenerate": "drop"}


def test_korsts_corpus_uses_the_score(korsts_corpus, data_dir):
    raw = read_korsts("dev", data_dir)
    assert len(korsts_corpus) == 1500
    assert korsts_corpus.column("human_score") == [r["score"] for r in raw]
    assert korsts_corpus.records[3]["z_scores"] == [None]
    assert "note" in korsts_corpus.meta["agreement"]


def test_named_build_folder_loads(tmp_path, data_dir):
    import datasets

    from kometrics.datasets_scripts.paraphrase.build import build

    corpus, folder = build("korsts", tmp_path / "k", data_dir=data_dir)
    ds = datasets.load_dataset(str(folder), split="test")
    assert len(ds) == 1500 and ds.features == features()
    assert [f["name"] for f in FEATURES_YAML] == ds.column_names
    with pytest.raises(ValueError, match="unknown corpus"):
        build_named("no-such-corpus", data_dir)


def test_rebuilt_folder_is_not_served_from_a_stale_datasets_cache(tmp_path):
    """datasets keys its cache of a YAML-configured folder on the config text: the jsonl name carries a
    content hash so that a rebuild with other content loads the new rows."""
    import datasets

    folder = tmp_path / "same"
    pairs = [Pair("a", "가", "나", ["r"], [1.0]), Pair("b", "다", "라", ["r"], [2.0])]
    for source in ("first", "second"):
        write_corpus(build_corpus(pairs, name="t", scale=(0, 6), source=source), folder)
        ds = datasets.load_dataset(str(folder), split="test")
        assert ds["source"] == [source, source]
    assert len(list(folder.glob("pairs*.jsonl"))) == 1


def test_package_card_configs_load_a_built_corpus(tmp_path, data_dir):
    """The folder card's configs (data/<config>/pairs-*.jsonl, declared features) load what build writes."""
    import importlib
    import shutil
    from pathlib import Path

    import datasets

    build_mod = importlib.import_module("kometrics.datasets_scripts.paraphrase.build")

    card = Path(build_mod.__file__).with_name("README.md")
    shutil.copy(card, tmp_path / "README.md")
    shutil.copytree(card.with_name("example"), tmp_path / "example")
    rel = build_mod.default_out("korsts").relative_to(build_mod.DATA_ROOT.parent)
    assert rel.as_posix() == "data/korsts_dev"
    build_mod.build("korsts", tmp_path / rel, data_dir=data_dir)
    ds = datasets.load_dataset(str(tmp_path), "korsts_dev", split="test")
    assert len(ds) == 1500 and ds.features == features()


def test_committed_example_is_what_the_builder_writes(tmp_path):
    """example/ is the ratings file and the folder built from it; rebuilding gives the same records."""
    import importlib
    from pathlib import Path

    import datasets

    build_mod = importlib.import_module("kometrics.datasets_scripts.paraphrase.build")
    example = Path(build_mod.__file__).with_name("example")
    _, folder = build_mod.build(str(example / "example.tsv"), tmp_path / "ex", scale=(0, 6))
    new = sorted(folder.glob("pairs-*.jsonl"))
    old = sorted(example.glob("pairs-*.jsonl"))
    assert [p.name for p in new] == [p.name for p in old]
    assert new[0].read_text(encoding="utf-8") == old[0].read_text(encoding="utf-8")
    ds = datasets.load_dataset(str(example.parent), "example", split="test")
    assert ds["id"] == [f"ex{i}" for i in range(1, 7)] and ds.features == features()
    assert load_corpus(example).meta["agreement"]["cohen_kappa"] == pytest.approx(
        load_corpus(folder).meta["agreement"]["cohen_kappa"])
