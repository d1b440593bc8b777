"""Publish every metric as a Hugging Face Space, so that ``evaluate.load("ORG/<metric>")`` works.

``kometrics publish --org ORG [--dry-run] [--out DIR]`` builds one Space folder per metric:

- exactly the metric folder's files (the evaluate module, its sibling modules, ``app.py``, ``requirements.txt``
  and, where plots need Hangul glyphs, ``packages.txt``), minus tests and caches (``__pycache__``, ``*.pyc``,
  ``tests/``, ...). A metric folder imports nothing outside itself, so its ``requirements.txt`` names no
  kometrics (a folder whose file does is refused);
- card fixes: the ``README.md`` metric card's YAML front matter is the Space configuration (``sdk: gradio``,
  ``app_file: app.py``, the ``evaluate``/``metric`` tags), missing keys are filled in; and calls written for a
  checkout, ``evaluate.load("metrics/<name>")``, are rewritten to the Space id ``evaluate.load("ORG/<name>")``
  in the card and in the module's documented examples (what the Hub shows as the metric's card).

Without ``--dry-run`` each folder is then uploaded with ``huggingface_hub``: ``create_repo(repo_id,
repo_type="space", space_sdk="gradio", exist_ok=True)`` and ``upload_folder`` (the Space then mirrors the
folder: files it no longer has are deleted, ``.gitattributes`` excepted). The token comes from
``HF_TOKEN`` or ``hf auth login``; it is never printed.

``--playground`` also publishes ``spaces/playground`` (from a checkout) as ``ORG/kometrics-playground``. The
playground imports kometrics, which is not on PyPI: the build puts a wheel of this checkout
(``pip wheel --no-deps``) into the Space folder and its ``requirements.txt`` installs it from the Space's own
Hub URL, ``kometrics[demo] @ https://huggingface.co/spaces/ORG/kometrics-playground/resolve/main/<wheel>``
(a Space installs its requirements before its files are in place, so a local path would not do). For a
private Space, or to install from elsewhere, pass ``--kometrics-requirement`` (e.g.
``"kometrics[demo] @ git+https://github.com/<you>/kometrics@v0.1.0"``); no wheel is built then.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kometrics import METRICS, __version__

__all__ = [
    "SpaceBuild",
    "IGNORE_PATTERNS",
    "available_metrics",
    "space_card",
    "playground_requirements",
    "rewrite_load_calls",
    "build_space",
    "build_playground",
    "build_wheel",
    "build_spaces",
    "upload_space",
    "publish",
    "register",
]

#: Files of a metric folder that never go to a Space.
IGNORE_PATTERNS = ("__pycache__", "*.pyc", "*.pyo", "tests", "test_*.py", ".pytest_cache", ".ruff_cache",
                   ".ipynb_checkpoints", "*.egg-info", ".DS_Store", ".cache")
#: Keys of the README front matter a Gradio metric Space needs, with the values filled in when missing.
REQUIRED_CARD_KEYS = {"sdk": "gradio", "app_file": "app.py"}
PLAYGROUND_NAME = "kometrics-playground"
_REPO_PART = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


@dataclass
class SpaceBuild:
    """One Space folder: what was built, where it goes, and whether it was uploaded."""

    name: str
    repo_id: str
    folder: Path
    uploaded: bool = False
    commit_url: str | None = None

    @property
    def url(self) -> str:
        return f"https://huggingface.co/spaces/{self.repo_id}"


def _package_dir() -> Path:
    return Path(__file__).resolve().parent.parent


def available_metrics() -> list[str]:
    """Metrics of :data:`kometrics.METRICS` whose folder (``<name>/<name>.py``) is installed."""
    return [name for name in METRICS if (_package_dir() / name / f"{name}.py").is_file()]


def _check_repo_part(value: str, what: str) -> str:
    if not isinstance(value, str) or not _REPO_PART.match(value) or "--" in value or ".." in value:
        raise ValueError(f"{what} {value!r} is not a valid Hugging Face name: use letters, digits, '-', '_' "
                         "and '.', starting and ending with a letter or digit")
    return value


def _split_front_matter(text: str, where: str) -> tuple[str, str]:
    if not text.startswith("---\n"):
        raise ValueError(f"{where} does not start with YAML front matter ('---' on the first line)")
    end = text.find("\n---\n", 3)
    if end < 0:
        raise ValueError(f"{where}: the YAML front matter is not closed by a '---' line")
    return text[4:end + 1], text[end + 5:]


def rewrite_load_calls(text: str, name: str, org: str) -> str:
    """``evaluate.load("metrics/<name>")`` (a checkout path) -> ``evaluate.load("<org>/<name>")``."""
    return re.sub(rf"""(["'])(?:\./)?metrics/{re.escape(name)}/?\1""", lambda m: f"{m[1]}{org}/{name}{m[1]}", text)


def space_card(readme: str | Path, name: str, org: str, where: str | None = None) -> str:
    """The Space's README.md: the metric card with a complete Space front matter.

    The front matter is kept verbatim when it already has ``title``, ``sdk: gradio``, ``app_file: app.py``,
    ``sdk_version`` and the ``evaluate`` and ``metric`` tags; otherwise it is completed and written back.
    """
    import yaml

    text = Path(readme).read_text(encoding="utf-8") if isinstance(readme, Path) else readme
    where = where or f"{name}/README.md"
    raw, body = _split_front_matter(text, where)
    meta = yaml.safe_load(raw) or {}
    if not isinstance(meta, dict):
        raise ValueError(f"{where}: the front matter is not a YAML mapping")
    for key, value in REQUIRED_CARD_KEYS.items():
        if meta.get(key) not in (None, value):
            raise ValueError(f"{where}: front matter has {key}: {meta[key]!r}; a metric Space needs {key}: {value}")
    complete = dict(meta)
    complete.setdefault("title", name)
    for key, value in REQUIRED_CARD_KEYS.items():
        complete.setdefault(key, value)
    if "sdk_version" not in complete:
        import gradio

        complete["sdk_version"] = gradio.__version__
    tags = list(complete.get("tags") or [])
    complete["tags"] = tags + [t for t in ("evaluate", "metric") if t not in tags]
    if complete != meta:
        raw = yaml.safe_dump(complete, allow_unicode=True, sort_keys=False, width=110)
    return f"---\n{raw}---\n{rewrite_load_calls(body, name, org)}"


def _requirement_name(line: str) -> str:
    return re.split(r"[\s\[<>=!~;@]", line, maxsplit=1)[0].lower()


def _requirement_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def playground_requirements(requirements: str | Path | None, kometrics_requirement: str) -> str:
    """``requirements.txt`` of the playground: the line that installs kometrics, then the playground's own needs
    (any kometrics line of them dropped; ``evaluate`` and ``gradio`` added when missing)."""
    text = "" if requirements is None else (
        Path(requirements).read_text(encoding="utf-8") if isinstance(requirements, Path) else requirements)
    lines = [line for line in _requirement_lines(text) if _requirement_name(line) != "kometrics"]
    names = {_requirement_name(line) for line in lines}
    lines += [pkg for pkg in ("evaluate", "gradio") if pkg not in names]
    header = f"# Space built by `kometrics publish` from kometrics {__version__}"
    return "\n".join([header, kometrics_requirement.strip(), *lines]) + "\n"


def _check_metric_requirements(path: Path, name: str) -> None:
    """A metric Space installs its ``requirements.txt`` as it is: it must name evaluate and gradio, never
    kometrics (the folder imports nothing outside itself)."""
    if not path.is_file():
        raise ValueError(f"metric {name!r} cannot be a Space: {path} is missing")
    names = {_requirement_name(line) for line in _requirement_lines(path.read_text(encoding="utf-8"))}
    if "kometrics" in names:
        raise ValueError(f"{path} names kometrics: a metric Space imports nothing outside its folder, so remove "
                         "that line (kometrics is not on PyPI; the Space would not build)")
    missing = [pkg for pkg in ("evaluate", "gradio") if pkg not in names]
    if missing:
        raise ValueError(f"{path} lacks {', '.join(missing)}: a metric Space needs evaluate and gradio")


def _copy_tree(src: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(*IGNORE_PATTERNS))


def build_space(name: str, out_dir: str | Path, org: str, source: str | Path | None = None) -> SpaceBuild:
    """Write the Space folder of metric ``name`` to ``out_dir/<name>``: the metric folder plus card fixes."""
    _check_repo_part(org, "org")
    src = Path(source) if source is not None else _package_dir() / name
    if not (src / f"{name}.py").is_file():
        raise ValueError(f"metric {name!r} is not installed: {src / f'{name}.py'} is missing")
    missing = [f for f in ("README.md", "app.py") if not (src / f).is_file()]
    if missing:
        raise ValueError(f"metric {name!r} cannot be a Space yet: {', '.join(missing)} missing in {src}")
    _check_metric_requirements(src / "requirements.txt", name)
    dest = Path(out_dir) / name
    _copy_tree(src, dest)
    for path in sorted(dest.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        new = rewrite_load_calls(text, name, org)
        if new != text:
            path.write_text(new, encoding="utf-8")
    (dest / "README.md").write_text(space_card(src / "README.md", name, org), encoding="utf-8")
    return SpaceBuild(name=name, repo_id=f"{org}/{name}", folder=dest)


def _playground_source() -> Path:
    folder = _package_dir().parent / "spaces" / "playground"
    if not (folder / "app.py").is_file():
        raise ValueError(f"the playground is published from a checkout of kometrics; {folder} has no app.py")
    return folder


def build_wheel(out_dir: str | Path) -> Path:
    """A wheel of this checkout (``pip wheel --no-deps``, offline, from a clean copy of the sources, so that no
    stale build output slips in) in ``out_dir``; returns its path."""
    import tempfile

    root = _package_dir().parent
    if not (root / "pyproject.toml").is_file():
        raise ValueError(f"a wheel is built from a checkout of kometrics; {root} has no pyproject.toml")
    out = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="kometrics-wheel-") as tmp:
        src = Path(tmp) / "src"
        for part in ("metrics", "datasets_scripts"):
            shutil.copytree(root / part, src / part, ignore=shutil.ignore_patterns(*IGNORE_PATTERNS, "data"))
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy2(root / name, src / name)
        pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(Path(tmp) / "dist")]
        # Offline with this environment's setuptools (and wheel) first; else pip's isolated build, which fetches
        # the build requirements of pyproject.toml from the package index.
        errors = []
        for extra in (["--no-build-isolation", "--no-index"], []):
            proc = subprocess.run([*pip, *extra, str(src)], capture_output=True, text=True)
            if proc.returncode == 0:
                break
            errors.append(proc.stderr.strip()[-1500:])
        built = sorted((Path(tmp) / "dist").glob("kometrics-*.whl"))
        if len(built) != 1:
            raise ValueError(f"could not build a wheel of {root}: " + "\n".join(errors))
        out.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy2(built[0], out / built[0].name))


def build_playground(out_dir: str | Path, org: str, requirement: str | None = None) -> SpaceBuild:
    """``spaces/playground`` as the Space ``ORG/kometrics-playground``. It needs kometrics with its demo extra:
    by default a wheel of this checkout goes into the folder and is installed from the Space's Hub URL;
    ``requirement`` replaces that line (and no wheel is built)."""
    _check_repo_part(org, "org")
    src = _playground_source()
    dest = Path(out_dir) / PLAYGROUND_NAME
    _copy_tree(src, dest)
    if requirement is None:
        wheel = build_wheel(dest)
        requirement = (f"kometrics[demo] @ https://huggingface.co/spaces/{org}/{PLAYGROUND_NAME}/resolve/main/"
                       f"{wheel.name}")
    reqs = src / "requirements.txt"
    (dest / "requirements.txt").write_text(playground_requirements(reqs if reqs.is_file() else None, requirement),
                                           encoding="utf-8")
    card = space_card(src / "README.md", PLAYGROUND_NAME, org, where="spaces/playground/README.md")
    (dest / "README.md").write_text(card, encoding="utf-8")
    return SpaceBuild(name=PLAYGROUND_NAME, repo_id=f"{org}/{PLAYGROUND_NAME}", folder=dest)


def build_spaces(out_dir: str | Path, org: str, names: Iterable[str] | None = None,
                 requirement: str | None = None, playground: bool = False) -> list[SpaceBuild]:
    """Build the Space folders of ``names`` (default: every installed metric) under ``out_dir``."""
    _check_repo_part(org, "org")
    if names is None:
        names = available_metrics()
        absent = [n for n in METRICS if n not in names]
        if absent:
            warnings.warn(f"not installed, so not published: {', '.join(absent)}", stacklevel=2)
    names = list(names)
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(METRICS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    builds = [build_space(name, out, org) for name in names]
    if playground:
        builds.append(build_playground(out, org, requirement))
    return builds


def upload_space(build: SpaceBuild, api: Any = None, private: bool | None = None) -> SpaceBuild:
    """Create the Space (if needed) and upload its folder; the Space then mirrors the folder."""
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi()
    api.create_repo(build.repo_id, repo_type="space", space_sdk="gradio", exist_ok=True, private=private)
    info = api.upload_folder(repo_id=build.repo_id, repo_type="space", folder_path=str(build.folder),
                             commit_message=f"kometrics {__version__}: {build.name}",
                             ignore_patterns=list(IGNORE_PATTERNS), delete_patterns=["*"])
    build.uploaded = True
    build.commit_url = getattr(info, "commit_url", None) or (info if isinstance(info, str) else None)
    return build


def publish(org: str, out_dir: str | Path, names: Sequence[str] | None = None, dry_run: bool = False,
            requirement: str | None = None, playground: bool = False, private: bool | None = None,
            api: Any = None) -> list[SpaceBuild]:
    """Build every Space folder under ``out_dir`` and, unless ``dry_run``, create and upload each Space."""
    builds = build_spaces(out_dir, org, names, requirement=requirement, playground=playground)
    if not dry_run:
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi()
        for build in builds:
            upload_space(build, api=api, private=private)
    return builds


def cmd_publish(args: argparse.Namespace, extra: list[str]) -> int:
    try:
        builds = publish(args.org, args.out, names=args.only, dry_run=args.dry_run,
                         requirement=args.kometrics_requirement,
                         playground=args.playground, private=True if args.private else None)
    except ValueError as e:
        print(f"kometrics publish: {e}", file=sys.stderr)
        return 2
    for b in builds:
        if b.uploaded:
            print(f"{b.name}: uploaded {b.folder} -> {b.url}")
        else:
            print(f"{b.name}: built {b.folder} (dry run; would go to {b.url})")
        if b.name != PLAYGROUND_NAME:
            print(f'    evaluate.load("{b.repo_id}")')
    return 0


def register(commands: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """``kometrics publish --org ORG [--dry-run] [--out DIR] [--only NAME ...] [--playground]``."""
    p = commands.add_parser("publish", help="build a Hugging Face Space per metric and upload it",
                            description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--org", required=True, help="Hub user or organisation that owns the Spaces (ORG/<metric>)")
    p.add_argument("--dry-run", action="store_true", help="only build the Space folders; upload nothing")
    p.add_argument("--out", default="build/spaces", help="where the Space folders are written (default: %(default)s)")
    p.add_argument("--only", action="append", choices=METRICS, help="publish only these metrics")
    p.add_argument("--playground", action="store_true",
                   help=f"also publish spaces/playground as ORG/{PLAYGROUND_NAME} (from a checkout)")
    p.add_argument("--private", action="store_true", help="create the Spaces as private")
    p.add_argument("--kometrics-requirement", metavar="SPEC",
                   help="the line of the playground's requirements.txt that installs kometrics (default: a wheel "
                        "of this checkout, uploaded with the Space and installed from its Hub URL; e.g. "
                        "'kometrics[demo] @ git+https://github.com/<you>/kometrics@v0.1.0'). Metric Spaces need "
                        "no kometrics")
    p.set_defaults(func=cmd_publish, allow_extra=False)
