"""kometrics.models.gemma.prepare without the 80-second conversion: a stand-in package with the same
``assemble()`` interface and a stand-in converter check the cache folder, the sha256 check, the marker, the
atomic replacement and the command. The real conversion is exercised by tests/real_model."""

from __future__ import annotations

import hashlib
import json
import textwrap

import pytest

from kometrics.models import gemma

PAYLOAD = b"GGUF stand-in bytes\n" * 100


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A package ``fake_gguf_pkg`` whose assemble() writes PAYLOAD, registered as model ``fake-model``, and a
    converter that writes a small folder and counts its calls."""
    pkg = tmp_path / "site" / "fake_gguf_pkg"
    (pkg / "data").mkdir(parents=True)
    (pkg / "data" / "GEMMA_TERMS.html").write_text("<html>terms</html>", encoding="utf-8")
    (pkg / "__init__.py").write_text(textwrap.dedent(f"""
        from pathlib import Path

        def assemble(output_path, overwrite=False):
            Path(output_path).write_bytes({PAYLOAD!r})
            return Path(output_path)
    """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = gemma.ModelSpec(name="fake-model", package="fake_gguf_pkg", distribution="fake-gguf-pkg",
                           gguf_file="fake.gguf", sha256=hashlib.sha256(PAYLOAD).hexdigest(), hub_id="org/fake",
                           license="test")
    monkeypatch.setitem(gemma.MODELS, "fake-model", spec)
    calls = []

    def convert(gguf, out, probe):
        assert gguf.read_bytes() == PAYLOAD
        calls.append(out)
        out.mkdir()
        (out / "config.json").write_text("{}", encoding="utf-8")
        (out / "model.safetensors").write_bytes(b"w" * 64)
        return 0.0

    monkeypatch.setattr(gemma, "_convert", convert)
    return spec, calls


def test_models_dir_precedence(tmp_path, monkeypatch):
    monkeypatch.delenv("KOMETRICS_MODELS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gemma.models_dir() == tmp_path / "xdg" / "kometrics" / "models"
    monkeypatch.setenv("KOMETRICS_MODELS", str(tmp_path / "env"))
    assert gemma.models_dir() == tmp_path / "env"
    assert gemma.models_dir(tmp_path / "arg") == tmp_path / "arg"


def test_prepare_converts_once_and_marks_the_folder(fake, tmp_path):
    spec, calls = fake
    root = tmp_path / "models"
    path = gemma.prepare("fake-model", cache_dir=root, log=None)
    assert path == root / "fake-model" and len(calls) == 1
    marker = json.loads((path / gemma.MARKER).read_text(encoding="utf-8"))
    assert marker["sha256"] == spec.sha256 and marker["name"] == "fake-model"
    assert marker["files"]["model.safetensors"] == 64 and "GEMMA_TERMS.html" in marker["files"]
    assert not (path / "fake.gguf").exists()  # the assembled file is not kept
    assert [p.name for p in root.iterdir() if p.name.startswith(".fake-model.tmp")] == []
    assert gemma.prepare("fake-model", cache_dir=root, log=None) == path and len(calls) == 1  # cached
    assert gemma.is_prepared(path, "fake-model")


def test_folder_without_valid_marker_is_rebuilt(fake, tmp_path):
    _, calls = fake
    root = tmp_path / "models"
    half = root / "fake-model"
    half.mkdir(parents=True)
    (half / "config.json").write_text("{}", encoding="utf-8")  # an interrupted copy: no marker
    assert not gemma.is_prepared(half, "fake-model")
    path = gemma.prepare("fake-model", cache_dir=root, log=None)
    assert len(calls) == 1 and gemma.is_prepared(path, "fake-model")
    (path / "model.safetensors").write_bytes(b"short")  # a damaged file: the size no longer matches
    assert not gemma.is_prepared(path, "fake-model")
    gemma.prepare("fake-model", cache_dir=root, log=None)
    assert len(calls) == 2 and (path / "model.safetensors").stat().st_size == 64


def test_sha256_mismatch_raises_and_leaves_nothing(fake, tmp_path, monkeypatch):
    spec, calls = fake
    monkeypatch.setitem(gemma.MODELS, "fake-model", gemma.ModelSpec(**{**spec.__dict__, "sha256": "0" * 64}))
    root = tmp_path / "models"
    with pytest.raises(ValueError, match="sha256"):
        gemma.prepare("fake-model", cache_dir=root, log=None)
    assert calls == [] and not (root / "fake-model").exists()
    assert [p.name for p in root.iterdir() if not p.name.endswith(".lock")] == []


def test_failed_conversion_keeps_the_previous_folder(fake, tmp_path, monkeypatch):
    root = tmp_path / "models"
    path = gemma.prepare("fake-model", cache_dir=root, log=None)

    def broken(gguf, out, probe):
        out.mkdir()
        (out / "config.json").write_text("{}", encoding="utf-8")
        raise RuntimeError("disk full")

    monkeypatch.setattr(gemma, "_convert", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        gemma.prepare("fake-model", cache_dir=root, force=True, log=None)
    assert gemma.is_prepared(path, "fake-model")  # untouched


def test_unknown_name_and_missing_package(tmp_path):
    with pytest.raises(ValueError, match="gemma-3-270m"):
        gemma.prepare("no-such-model", cache_dir=tmp_path)
    spec = gemma.ModelSpec(name="x", package="no_such_package_kometrics", distribution="no-such", gguf_file="x",
                           sha256="0" * 64, hub_id="x", license="x")
    with pytest.raises(ModuleNotFoundError, match=r"kometrics\[gemma\]"):
        gemma._assemble(spec, tmp_path)


def test_command_prints_the_folder(fake, tmp_path, capsys):
    from kometrics.cli import main

    root = tmp_path / "models"
    assert main(["models", "prepare", "fake-model", "--cache-dir", str(root)]) == 0
    assert capsys.readouterr().out.strip() == str(root / "fake-model")
    assert main(["models", "list", "--cache-dir", str(root)]) == 0
    listing = capsys.readouterr().out
    assert "fake-model\tprepared" in listing and "gemma-3-270m" in listing
