"""The Space answers over HTTP (gradio_client) with the verdict and the reasons."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "metrics" / "lmre" / "app.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_space_explains_acceptance():
    from gradio_client import Client

    spec = importlib.util.spec_from_file_location("_lmre_space", APP)
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    port = _free_port()
    app.demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=port)
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        text, table, details = client.predict("나는 / 밥을 먹고 // 학교에 갔다",
                                              "나는 밥을 / 먹고 학교에 갔다\n나는 / 밥을 먹고 / 학교에 갔다",
                                              "f1", 0.5, "typed", api_name="/explain")
        assert "rejected" in text and details["best_reference_index"] == 1
        assert details["best_score"] == 0.5
        assert [row[0] for row in table["data"]] == [0, 1]
        text, _, details = client.predict("가 / 나", "가 / 다", "f1", 0.5, "binary", api_name="/explain")
        assert text.startswith("**Error:**") and "references[0]" in text
    finally:
        app.demo.close()
