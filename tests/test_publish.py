"""``kometrics publish``: the Space folders it builds, and the Hub calls it makes.

The central check: every dry-run Space folder loads with ``evaluate.load("ORG/<name>")`` in a fresh Python
process that is offline and cannot import anything of this project (no kometrics, no checkout on the path),
its docstring examples pass there, exactly as they would for a user of the published Space, and its
``app.py`` builds its Gradio app there. A Space folder is exactly its metric folder plus card fixes; its
``requirements.txt`` names no kometrics. The playground's names a wheel built from this checkout, which installs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from .conftest import METRICS_DIR, REPO

ORG = "kometrics-test"


def _all_metrics() -> list[str]:
    from kometrics import METRICS

    return list(METRICS)


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory) -> Path:
    """``kometrics publish --org ORG --dry-run --out <tmp>/<ORG> --playground`` (every metric).

    The output folder is named after the org so that, from its parent as cwd, ``evaluate.load("ORG/<name>")``
    resolves to the built folder (evaluate tries a local folder before the Hub).
    """
    from kometrics.cli import main

    out = tmp_path_factory.mktemp("publish") / ORG
    assert main(["publish", "--org", ORG, "--dry-run", "--out", str(out), "--playground"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted([*_all_metrics(), "kometrics-playground"])
    return out


def _load_calls_rewritten(text: str, name: str) -> str:
    return text.replace(f'"metrics/{name}"', f'"{ORG}/{name}"').replace(f"'metrics/{name}'", f"'{ORG}/{name}'")


# --- the folders ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", _all_metrics())
def test_dry_run_folder_is_the_metric_folder_plus_card_fixes(name, dry_run):
    folder = dry_run / name
    src = METRICS_DIR / name
    files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    expected = {p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()
                and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    assert files == expected and {"README.md", "app.py", "requirements.txt", f"{name}.py"} <= files
    for rel in sorted(files - {"README.md"}):
        got, original = (folder / rel).read_bytes(), (src / rel).read_bytes()
        if rel.endswith(".py"):  # the documented examples load the Space, not a checkout
            original = _load_calls_rewritten(original.decode("utf-8"), name).encode("utf-8")
        assert got == original, rel
    # the card: the front matter completed into a Space config, the body's load calls rewritten
    card = (folder / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(card.split("---\n", 2)[1])
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and meta.get("sdk_version")
    assert {"evaluate", "metric"} <= set(meta["tags"])
    source_body = (src / "README.md").read_text(encoding="utf-8").split("---\n", 2)[2]
    assert card.split("---\n", 2)[2] == _load_calls_rewritten(source_body, name)


@pytest.mark.parametrize("name", _all_metrics())
def test_metric_space_requirements_name_no_kometrics(name, dry_run):
    names = {re.split(r"[\s\[<>=!~;@]", r, maxsplit=1)[0].lower()
             for r in (dry_run / name / "requirements.txt").read_text(encoding="utf-8").splitlines()
             if r.strip() and not r.startswith("#")}
    assert "kometrics" not in names and {"evaluate", "gradio"} <= names


def test_playground_requirement_installs(dry_run, tmp_path):
    """The playground's kometrics line names the wheel in its folder at the Space's Hub URL; the wheel installs
    (offline, without its dependencies) and the installed kometrics has what the playground imports."""
    from packaging.requirements import Requirement

    folder = dry_run / "kometrics-playground"
    assert (folder / "app.py").read_bytes() == (REPO / "spaces" / "playground" / "app.py").read_bytes()
    reqs = [r for r in (folder / "requirements.txt").read_text(encoding="utf-8").splitlines()
            if r.strip() and not r.startswith("#")]
    ours = [Requirement(r) for r in reqs if Requirement(r).name == "kometrics"]
    assert len(ours) == 1 and ours[0].extras == {"demo"}
    wheels = sorted(folder.glob("kometrics-*.whl"))
    assert len(wheels) == 1
    assert ours[0].url == f"https://huggingface.co/spaces/{ORG}/kometrics-playground/resolve/main/{wheels[0].name}"
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target",
                    str(target), str(wheels[0])], check=True, capture_output=True, text=True)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import kometrics, kometrics.cli, kometrics.demo; "
            "from kometrics import korbertscore, perplexity, merge_sv_accuracy, lmre, klue_sts; "
            "print(kometrics.__file__)")
    proc = subprocess.run([sys.executable, "-I", "-c", code, str(target)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert Path(proc.stdout.strip()).is_relative_to(target)
    meta = yaml.safe_load((folder / "README.md").read_text(encoding="utf-8").split("---\n", 2)[1])
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py"


# --- each Space alone, in a fresh offline process -------------------------------------------------------

_ISOLATED = textwrap.dedent('''
    import json, sys
    from pathlib import Path

    cfg = json.loads(sys.argv[1])
    # Nothing of the project may be importable: drop the editable-install finders of kometrics and refuse
    # the name itself (in case a non-editable copy is installed in site-packages).
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")
                        and "__editable__" not in repr(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if "__editable__" not in getattr(h, "__module__", "")]
    sys.path_importer_cache.clear()

    class _Refuse:
        def find_spec(self, name, path=None, target=None):
            if name == "kometrics" or name.startswith("kometrics."):
                raise ModuleNotFoundError(f"No module named {name!r} (isolated Space check)", name=name)
            return None

    sys.meta_path.insert(0, _Refuse())
    repo = Path(cfg["repo"]).resolve()
    venv = Path(sys.prefix).resolve()  # the virtual environment may live inside the checkout


    def in_project(path):
        path = Path(path).resolve()
        return path.is_relative_to(repo) and not path.is_relative_to(venv)


    out = {"path_has_repo": [p for p in sys.path if p and in_project(p)]}
    try:
        import kometrics  # noqa: F401
        out["kometrics_importable"] = True
    except ImportError:
        out["kometrics_importable"] = False

    import evaluate

    metric = evaluate.load(cfg["load"])
    module = sys.modules[type(metric).__module__]
    out["name"] = metric.name
    out["module_file"] = module.__file__
    # The doctests as evaluate's module test runs them, with the Hub ids of the examples patched to local
    # stand-ins: the harness file is executed here (not imported), it imports nothing of the project.
    harness = {"__name__": "evaluate_harness"}
    exec(compile(Path(cfg["harness"]).read_text(encoding="utf-8"), cfg["harness"], "exec"), harness)
    try:
        with harness["stand_in_models"](cfg["models"]):
            results = harness["run_doctests"](module)
        out["examples"], out["failures"], out["report"] = results.attempted, results.failed, ""
    except Exception as e:  # a failing example: its source, expected and actual output
        out["examples"], out["failures"], out["report"] = -1, 1, f"{type(e).__name__}: {e}"[-6000:]
    # The Space's app builds there too (imported as a Space runs it: its folder first on sys.path, cwd there).
    import importlib.util, os
    import gradio as gr

    folder = Path(cfg["load"]).resolve()
    os.chdir(folder)
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location("space_app", folder / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    out["app_builds"] = isinstance(app.demo, gr.Blocks)
    out["repo_modules"] = sorted(
        n for n, m in list(sys.modules.items())
        if getattr(m, "__file__", None) and in_project(m.__file__))
    print("RESULT " + json.dumps(out))
''')


@pytest.mark.parametrize("name", _all_metrics())
def test_space_loads_alone_offline_and_doctests_pass(name, dry_run, stand_ins, tmp_path):
    script = tmp_path / "isolated_space.py"
    script.write_text(_ISOLATED, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "HF_", "KOMETRICS"))}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_EVALUATE_OFFLINE="1",
               HF_HOME=str(tmp_path / "hf-home"), TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")
    cfg = {"load": f"{ORG}/{name}", "repo": str(REPO), "models": stand_ins,
           "harness": str(Path(__file__).with_name("evaluate_harness.py"))}
    # -I: isolated mode (no cwd or script folder on sys.path, PYTHON* variables and user site ignored).
    proc = subprocess.run([sys.executable, "-I", str(script), json.dumps(cfg)], cwd=dry_run.parent, env=env,
                          capture_output=True, text=True, timeout=600)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    out = json.loads(lines[-1][len("RESULT "):])
    assert out["kometrics_importable"] is False
    assert out["path_has_repo"] == []
    assert Path(out["module_file"]).is_relative_to(tmp_path / "hf-home"), out["module_file"]
    assert Path(out["module_file"]).name == f"{name}.py"
    assert out["repo_modules"] == [], out["repo_modules"]
    assert out["examples"] >= 2
    assert out["failures"] == 0, out["report"]
    assert out["app_builds"] is True


# --- the Hub calls --------------------------------------------------------------------------------------

def test_publish_calls_the_hub(monkeypatch, tmp_path, capsys):
    """Without --dry-run: create_repo(space, gradio, exist_ok) then upload_folder of the built folder."""
    import huggingface_hub

    from kometrics.cli import main
    from kometrics.publish import available_metrics

    calls: list[tuple[str, tuple, dict]] = []

    def create_repo(self, *args, **kwargs):
        calls.append(("create_repo", args, kwargs))
        return huggingface_hub.RepoUrl(f"https://huggingface.co/spaces/{(args or [kwargs['repo_id']])[0]}")

    def upload_folder(self, **kwargs):
        files = sorted(p.relative_to(kwargs["folder_path"]).as_posix()
                       for p in Path(kwargs["folder_path"]).rglob("*") if p.is_file())
        calls.append(("upload_folder", (), {**kwargs, "_files": files}))
        return f"https://huggingface.co/spaces/{kwargs['repo_id']}/commit/0"

    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", create_repo)
    monkeypatch.setattr(huggingface_hub.HfApi, "upload_folder", upload_folder)
    names = available_metrics()
    assert names == _all_metrics()
    argv = ["publish", "--org", "my-org", "--out", str(tmp_path / "spaces")]
    for n in names:
        argv += ["--only", n]
    assert main(argv) == 0
    assert [c[0] for c in calls] == ["create_repo", "upload_folder"] * len(names)
    for i, name in enumerate(names):
        (_, args, kwargs), (_, _, up) = calls[2 * i], calls[2 * i + 1]
        assert (args[0] if args else kwargs["repo_id"]) == f"my-org/{name}"
        assert kwargs["repo_type"] == "space" and kwargs["space_sdk"] == "gradio" and kwargs["exist_ok"] is True
        assert up["repo_id"] == f"my-org/{name}" and up["repo_type"] == "space"
        assert Path(up["folder_path"]) == tmp_path / "spaces" / name
        assert {"README.md", "app.py", "requirements.txt", f"{name}.py"} <= set(up["_files"])
        assert not any("__pycache__" in f or f.startswith("tests/") for f in up["_files"])
    printed = capsys.readouterr().out
    assert all(f"https://huggingface.co/spaces/my-org/{n}" in printed for n in names)
    assert all(f'evaluate.load("my-org/{n}")' in printed for n in names)


def test_dry_run_makes_no_hub_call(monkeypatch, tmp_path):
    import huggingface_hub

    from kometrics import publish as pub

    def refuse(*args, **kwargs):
        raise AssertionError("a dry run must not call the Hub")

    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", refuse)
    monkeypatch.setattr(huggingface_hub.HfApi, "upload_folder", refuse)
    _fake_metric(tmp_path / "pkg" / "toy")
    monkeypatch.setattr(pub, "_package_dir", lambda: tmp_path / "pkg")
    monkeypatch.setattr(pub, "METRICS", ("toy", "absent"))
    with pytest.warns(UserWarning, match="not installed, so not published: absent"):
        builds = pub.publish("org", tmp_path / "out", dry_run=True)
    assert [(b.name, b.uploaded) for b in builds] == [("toy", False)]
    assert (tmp_path / "out" / "toy" / "toy.py").is_file()
    with pytest.raises(ValueError, match="unknown metric"):
        pub.publish("org", tmp_path / "out2", names=["nope"], dry_run=True)


# --- the pieces -----------------------------------------------------------------------------------------

def _fake_metric(folder: Path, card: str | None = None, reqs: str | None = "evaluate\ngradio>=5\ntorch>=2\n") -> Path:
    (folder / "tests").mkdir(parents=True)
    (folder / "__pycache__").mkdir()
    (folder / "toy.py").write_text('"""Example: evaluate.load("metrics/toy") or evaluate.load(\'./metrics/toy\')."""\n'
                                   'OTHER = "metrics/toy_other"\n', encoding="utf-8")
    (folder / "app.py").write_text("demo = None\n", encoding="utf-8")
    (folder / "tests" / "test_toy.py").write_text("", encoding="utf-8")
    (folder / "__pycache__" / "toy.cpython-311.pyc").write_bytes(b"\0")
    (folder / "README.md").write_text(card if card is not None else
                                      "---\ntitle: Toy\ntags:\n- korean\n---\n# Toy\n"
                                      '```python\ntoy = evaluate.load("metrics/toy")\n```\n', encoding="utf-8")
    if reqs is not None:
        (folder / "requirements.txt").write_text(reqs, encoding="utf-8")
    return folder


def test_build_space_pieces(tmp_path):
    import gradio

    from kometrics.publish import build_space

    src = _fake_metric(tmp_path / "src" / "toy")
    build = build_space("toy", tmp_path / "out", "org", source=src)
    assert build.repo_id == "org/toy" and build.url == "https://huggingface.co/spaces/org/toy"
    files = sorted(p.relative_to(build.folder).as_posix() for p in build.folder.rglob("*") if p.is_file())
    assert files == ["README.md", "app.py", "requirements.txt", "toy.py"]
    assert (build.folder / "requirements.txt").read_bytes() == (src / "requirements.txt").read_bytes()
    code = (build.folder / "toy.py").read_text(encoding="utf-8")
    assert 'evaluate.load("org/toy")' in code and "evaluate.load('org/toy')" in code
    assert '"metrics/toy_other"' in code  # another name is left alone
    card = (build.folder / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(card.split("---\n", 2)[1])
    assert meta == {"title": "Toy", "tags": ["korean", "evaluate", "metric"], "sdk": "gradio", "app_file": "app.py",
                    "sdk_version": gradio.__version__}
    assert 'evaluate.load("org/toy")' in card


@pytest.mark.parametrize("reqs, match", [
    ("evaluate\ngradio\nkometrics>=0.0.1\n", "names kometrics"),
    ("evaluate\ngradio\nkometrics[demo] @ git+https://example.org/k.git\n", "names kometrics"),
    ("evaluate\ntorch\n", "lacks gradio"),
    (None, "requirements.txt is missing"),
])
def test_metric_requirements_that_would_not_build_are_refused(tmp_path, reqs, match):
    from kometrics.publish import build_space

    src = _fake_metric(tmp_path / "src" / "toy", reqs=reqs)
    with pytest.raises(ValueError, match=match):
        build_space("toy", tmp_path / "out", "org", source=src)


def test_complete_front_matter_is_kept_verbatim(tmp_path):
    from kometrics.publish import space_card

    card = ("---\ntitle: Toy\nemoji: 🇰🇷\nsdk: gradio\nsdk_version: 6.31.0\napp_file: app.py\ntags:\n- evaluate\n"
            "- metric\ndescription: >-\n  one paragraph\n---\n# Toy\n")
    assert space_card(card, "toy", "org") == card


@pytest.mark.parametrize("card, match", [
    ("# no front matter\n", "front matter"),
    ("---\ntitle: x\n# never closed\n", "not closed"),
    ("---\ntitle: x\nsdk: streamlit\n---\nbody\n", "sdk: gradio"),
    ("---\n- a list\n---\nbody\n", "mapping"),
])
def test_bad_cards_are_refused(card, match):
    from kometrics.publish import space_card

    with pytest.raises(ValueError, match=match):
        space_card(card, "toy", "org")


def test_playground_requirements(tmp_path):
    from kometrics.publish import playground_requirements

    text = playground_requirements("evaluate\ngradio>=6\nkometrics==0.1.0\nscipy\n",
                                   "kometrics[demo] @ git+https://example.org/k.git@v1")
    assert text.splitlines()[1:] == ["kometrics[demo] @ git+https://example.org/k.git@v1", "evaluate", "gradio>=6",
                                     "scipy"]
    assert playground_requirements(None, "kometrics[demo] @ https://x/k.whl").splitlines()[1:] == [
        "kometrics[demo] @ https://x/k.whl", "evaluate", "gradio"]


@pytest.mark.parametrize("argv, message", [
    (["--org", "bad org"], "not a valid Hugging Face name"),
    (["--org=-dash"], "not a valid Hugging Face name"),
])
def test_cli_errors(argv, message, tmp_path, capsys):
    from kometrics.cli import main

    assert main(["publish", *argv, "--dry-run", "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_missing_card_is_named(tmp_path):
    from kometrics.publish import build_space

    src = _fake_metric(tmp_path / "src" / "toy")
    (src / "README.md").unlink()
    with pytest.raises(ValueError, match="README.md missing"):
        build_space("toy", tmp_path / "out", "org", source=src)
