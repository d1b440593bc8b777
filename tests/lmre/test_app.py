"""The Space answers over HTTP (gradio_client) with the verdict and the reasons."""

from __future__ import annotations

from tests.conftest import METRICS_DIR, serve_app


def test_space_explains_acceptance():
    with serve_app(METRICS_DIR / "lmre" / "app.py") as (_, client):
        text, table, details = client.predict("나는 / 밥을 먹고 // 학교에 갔다",
                                              "나는 밥을 / 먹고 학교에 갔다\n나는 / 밥을 먹고 / 학교에 갔다",
                                              "f1", 0.5, "typed", api_name="/explain")
        assert "rejected" in text and details["best_reference_index"] == 1
        assert details["best_score"] == 0.5
        assert [row[0] for row in table["data"]] == [0, 1]
        text, _, details = client.predict("가 / 나", "가 / 다", "f1", 0.5, "binary", api_name="/explain")
        assert text.startswith("**Error:**") and "references[0]" in text
