"""The KLUE-STS dataset builder checks what its docstring promises: labels consistent with KLUE's rule."""

from __future__ import annotations

import json

import pytest

from kometrics.datasets_scripts.klue_sts.build import build, to_hf_record


def _rec(real: float, binary: int) -> dict:
    return {"guid": "g-1", "source": "s", "sentence1": "가", "sentence2": "나",
            "labels": {"label": round(real, 1), "real-label": real, "binary-label": binary}}


@pytest.mark.parametrize("real, binary", [(3.0, 1), (2.999, 0), (4.2, 1), (0.0, 0)])
def test_consistent_labels_pass(real, binary):
    assert to_hf_record(_rec(real, binary))["labels"]["binary-label"] == binary


@pytest.mark.parametrize("real, binary", [(3.0, 0), (2.999, 1), (4.2, 0)])
def test_inconsistent_binary_label_is_refused(real, binary):
    with pytest.raises(ValueError, match=r"record g-1: binary-label .* disagrees with real-label"):
        to_hf_record(_rec(real, binary))


def test_a_bad_record_in_a_file_stops_the_build(tmp_path):
    src = tmp_path / "klue-sts-v1.1_dev.json"
    src.write_text(json.dumps([_rec(4.0, 1), _rec(1.0, 1)]), encoding="utf-8")
    with pytest.raises(ValueError, match="disagrees"):
        build(tmp_path, tmp_path / "out")
    assert not (tmp_path / "out" / "validation.jsonl").exists()
