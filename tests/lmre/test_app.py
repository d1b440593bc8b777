"""The Space answers over HTTP (gradio_client) with the verdict and the reasons.

The verdict is the first line of the Markdown it returns (``### ✅ accepted`` / ``### ❌ rejected``); it is
checked against ``lmre.explain`` in both directions, so an app that always says the same thing fails."""

from __future__ import annotations

from tests.conftest import METRICS_DIR, serve_app

VERDICT = {True: "### ✅ accepted", False: "### ❌ rejected"}


def test_space_explains_acceptance():
    from kometrics.lmre import explain

    pred, refs = "나는 / 밥을 먹고 // 학교에 갔다", ["나는 밥을 / 먹고 학교에 갔다", "나는 / 밥을 먹고 / 학교에 갔다"]
    with serve_app(METRICS_DIR / "lmre" / "app.py") as (_, client):
        for theta, accepted in ((0.4, True), (0.5, False)):  # best F1 0.5: > 0.4, but not > 0.5
            want = explain(pred, refs, similarity="f1", theta=theta, break_types="typed")
            assert want["accepted"] is accepted
            text, table, details = client.predict(pred, "\n".join(refs), "f1", theta, "typed", api_name="/explain")
            assert text.splitlines()[0] == VERDICT[accepted], text
            assert details["accepted"] is accepted
        assert details["best_reference_index"] == 1
        assert details["best_score"] == 0.5
        assert [row[0] for row in table["data"]] == [0, 1]
        text, _, details = client.predict("가 / 나", "가 / 다", "f1", 0.5, "binary", api_name="/explain")
        assert text.startswith("**Error:**") and "references[0]" in text
