"""Every plot draws Korean text with a Hangul font registered from its file (issue 14).

matplotlib picks fonts from a list it cached on first use; a font installed afterwards is not in it, and the
alignment heatmap used to look only there (32 "Glyph ... missing" warnings, boxes in the PNG) while the SV
curve never set a Hangul font at all. Each figure is rendered to PNG here and any missing-glyph warning fails
the test. ``make test`` installs fonts-nanum; where no Hangul font exists, one warning says what to install.
"""

from __future__ import annotations

import filecmp
import io
import warnings

import numpy as np
import pytest

from .conftest import METRICS_DIR, REPO, load_app, missing, require_module

KOREAN = "한국어 그림: 씨앗 변형 정확도"


def _render(fig) -> list[str]:
    """Draw ``fig`` to PNG outside any rc context (as gradio does); the glyph warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")
    return [str(w.message) for w in caught if "missing from font" in str(w.message) or "Glyph" in str(w.message)]


def _families(fig) -> set[str]:
    return {f for t in fig.findobj(lambda a: hasattr(a, "get_fontfamily")) for f in t.get_fontfamily()}


@pytest.fixture(scope="module")
def hangul():
    from kometrics.korbertscore.fonts import INSTALL_HINT, hangul_font

    family = hangul_font()
    if family is None:
        missing(f"a Hangul font: {INSTALL_HINT}")  # make test installs fonts-nanum; fails under CI=true
    return family


def test_font_helper_copies_are_identical():
    a, b = METRICS_DIR / "korbertscore" / "fonts.py", METRICS_DIR / "merge_sv_accuracy" / "fonts.py"
    assert filecmp.cmp(a, b, shallow=False), "metrics/korbertscore/fonts.py and metrics/merge_sv_accuracy/fonts.py differ"


def test_sv_curve_with_korean_labels(hangul):
    from kometrics.merge_sv_accuracy import plot_sv_curve, seed_variant_accuracy

    result = seed_variant_accuracy([0, 0, 1, 2, 2, 2], [0, 0, 0, 2, 2, 2], ["a", "a", "a", "b", "b", "b"],
                                   is_seed=[True, False, False, True, False, False],
                                   word_classes=["", "명사", "동사", "", "명사", "형용사"])
    fig = plot_sv_curve(result, title=KOREAN)
    assert hangul in _families(fig)
    assert _render(fig) == []


def test_alignment_heatmap(hangul, tiny_bert):
    from kometrics.korbertscore.plotting import plot_alignment

    fig = plot_alignment("오늘은 날씨가 정말 맑다.", "오늘 하늘이 맑네요.", model_type=tiny_bert, num_layers=4)
    assert any("오늘" in t.get_text() or "##" in t.get_text() for t in fig.axes[0].get_yticklabels())
    assert hangul in _families(fig)
    assert _render(fig) == []


def test_paraphrase_plots(hangul, tmp_path):
    from kometrics.bench.paraphrase.benchmark import BenchmarkResult
    from kometrics.bench.paraphrase.plotting import plot_layers, plot_scatter

    rng = np.random.default_rng(0)
    human = rng.normal(size=20)
    table3 = [{"idf": False, "layer": k, "P_pearson": 0.1 * k, "R_pearson": 0.2, "F1_pearson": 0.15 * k,
               "F1_pearson_ci": [0.1 * k - 0.1, 0.1 * k + 0.1]} for k in range(3)]
    table2 = [{"metric": "BERT-F1 (한국어)", "column": "bert", "layer": 2, "pearson": 0.4, "pearson_ci": [0.1, 0.6]},
              {"metric": "BLEU 형태소", "column": "bleu", "layer": None, "pearson": 0.2, "pearson_ci": [0.0, 0.4]}]
    result = BenchmarkResult(config={}, corpus={"name": "한국어 말바꿈 말뭉치"}, ids=[str(i) for i in range(20)],
                             references=["가"] * 20, candidates=["나"] * 20, human=human, rating_mean=human,
                             columns={"bert": human + rng.normal(size=20), "bleu": rng.normal(size=20)},
                             table2=table2, table3=table3, table4=[], best_layer={}, signature="",
                             model_label="한국어 모델")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_layers(result, tmp_path / "layers.png")
        plot_scatter(result, tmp_path / "scatter.png")
    assert not [str(w.message) for w in caught if "missing from font" in str(w.message)]
    assert (tmp_path / "layers.png").stat().st_size > 0 and (tmp_path / "scatter.png").stat().st_size > 0


def test_playground_plots(hangul, tiny_bert):
    require_module("gradio", "pip install -e '.[demo]'")
    app = load_app(REPO / "spaces" / "playground" / "app.py", "_kometrics_playground_fonts")
    fig, _, _ = app.merge_sv_curve(app.EXAMPLE_MERGE)
    assert _render(fig) == []
    fig, _ = app.korbertscore_alignment("오늘은 날씨가 맑다.", "오늘 하늘이 맑다.", tiny_bert, 4)
    assert hangul in _families(fig) and _render(fig) == []


def test_font_installed_after_matplotlib_cached_its_list(monkeypatch, hangul):
    """The old lookup read matplotlib's cached font list only; the file is now registered directly."""
    from matplotlib import font_manager

    from kometrics.merge_sv_accuracy import fonts, plot_sv_curve

    manager = font_manager.fontManager
    monkeypatch.setattr(manager, "ttflist", [f for f in manager.ttflist if f.name != hangul])  # as if installed later
    manager._findfont_cached.cache_clear()
    fonts.hangul_font.cache_clear()
    try:
        fig = plot_sv_curve({"sv_accuracy": {0.5: 1.0, 1.0: 0.5}, "sv_accuracy_by_word_class": {"명사": {1.0: 0.5}}},
                            title=KOREAN)
        assert _render(fig) == []
        assert any(f.name == hangul for f in manager.ttflist)
    finally:
        fonts.hangul_font.cache_clear()
        manager._findfont_cached.cache_clear()


def test_no_hangul_font_says_what_to_install(monkeypatch):
    from kometrics.merge_sv_accuracy import fonts

    monkeypatch.setattr(fonts, "_candidates", lambda: iter(()))
    fonts.hangul_font.cache_clear()
    try:
        with pytest.warns(UserWarning, match="apt-get install fonts-nanum") as caught:
            assert fonts.hangul_font() is None
            assert fonts.hangul_rc() == {"axes.unicode_minus": False}  # no second warning: once per process
        assert len([w for w in caught if "Hangul" in str(w.message)]) == 1
    finally:
        fonts.hangul_font.cache_clear()
