"""Publish every metric as a Hugging Face Space, so that ``evaluate.load("ORG/<metric>")`` works.

``kometrics publish --org ORG [--dry-run] [--out DIR]`` builds one Space folder per metric:

- the metric folder's files (the evaluate module, its sibling modules, ``app.py``, ...) minus tests and
  caches (``__pycache__``, ``*.pyc``, ``tests/``, ``.pytest_cache``, ...);
- its ``README.md`` metric card, whose YAML front matter is the Space configuration (``sdk: gradio``,
  ``app_file: app.py``, the ``evaluate``/``metric`` tags); missing keys are filled in;
- a ``requirements.txt`` with the metric's own needs plus a pin of this kometrics release, and a
  ``packages.txt`` (``fonts-nanum``, so that plots show Hangul) unless the folder has its own;
- calls written for a checkout, ``evaluate.load("metrics/<name>")``, rewritten to the Space id
  ``evaluate.load("ORG/<name>")`` in the code examples and the card.

Without ``--dry-run`` each folder is then uploaded with ``huggingface_hub``: ``create_repo(repo_id,
repo_type="space", space_sdk="gradio", exist_ok=True)`` and ``upload_folder`` (the Space then mirrors the
folder: files it no longer has are deleted, ``.gitattributes`` excepted). The token comes from
``HF_TOKEN`` or ``hf auth login``; it is never printed. ``--playground`` also publishes
``spaces/playground`` (from a checkout) as ``ORG/kometrics-playground``.
"""

from __future__ import annotations

import argparse
import re
import shutil
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
    "default_requirement",
    "available_metrics",
    "space_card",
    "space_requirements",
    "rewrite_load_calls",
    "build_space",
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
#: ``packages.txt`` of a metric Space (apt packages the Space installs): Hangul glyphs for matplotlib plots.
SPACE_PACKAGES = ("fonts-nanum",)
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


def default_requirement() -> str:
    """The requirement line that pins this kometrics release."""
    return f"kometrics=={__version__}"


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


def space_requirements(requirements: str | Path | None, requirement: str | None = None) -> str:
    """``requirements.txt`` of a Space: the pin of this kometrics release, then the metric's own needs.

    Lines of the metric's file that name kometrics are replaced by the pin; ``evaluate`` and ``gradio`` are
    added when missing. ``requirement=""`` leaves kometrics out (for a release that is not on PyPI).
    """
    requirement = default_requirement() if requirement is None else requirement.strip()
    own: list[str] = []
    if requirements is not None:
        text = Path(requirements).read_text(encoding="utf-8") if isinstance(requirements, Path) else requirements
        own = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    lines = [line for line in own if re.split(r"[\s\[<>=!~;@]", line, maxsplit=1)[0].lower() != "kometrics"]
    names = {re.split(r"[\s\[<>=!~;@]", line, maxsplit=1)[0].lower() for line in lines}
    lines += [pkg for pkg in ("evaluate", "gradio") if pkg not in names]
    header = [f"# Space built by `kometrics publish` from kometrics {__version__}"]
    return "\n".join(header + ([requirement] if requirement else []) + lines) + "\n"


def _copy_tree(src: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(*IGNORE_PATTERNS))


def build_space(name: str, out_dir: str | Path, org: str, requirement: str | None = None,
                source: str | Path | None = None) -> SpaceBuild:
    """Write the Space folder of metric ``name`` to ``out_dir/<name>`` and return what was built."""
    _check_repo_part(org, "org")
    src = Path(source) if source is not None else _package_dir() / name
    if not (src / f"{name}.py").is_file():
        raise ValueError(f"metric {name!r} is not installed: {src / f'{name}.py'} is missing")
    missing = [f for f in ("README.md", "app.py") if not (src / f).is_file()]
    if missing:
        raise ValueError(f"metric {name!r} cannot be a Space yet: {', '.join(missing)} missing in {src}")
    dest = Path(out_dir) / name
    _copy_tree(src, dest)
    for path in sorted(dest.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        new = rewrite_load_calls(text, name, org)
        if new != text:
            path.write_text(new, encoding="utf-8")
    (dest / "README.md").write_text(space_card(src / "README.md", name, org), encoding="utf-8")
    reqs = src / "requirements.txt"
    (dest / "requirements.txt").write_text(space_requirements(reqs if reqs.is_file() else None, requirement),
                                           encoding="utf-8")
    if not (dest / "packages.txt").is_file():  # Debian packages of the Space: a font with Hangul for the plots
        (dest / "packages.txt").write_text("\n".join(SPACE_PACKAGES) + "\n", encoding="utf-8")
    return SpaceBuild(name=name, repo_id=f"{org}/{name}", folder=dest)


def _playground_source() -> Path:
    folder = _package_dir().parent / "spaces" / "playground"
    if not (folder / "app.py").is_file():
        raise ValueError(f"the playground is published from a checkout of kometrics; {folder} has no app.py")
    return folder


def build_playground(out_dir: str | Path, org: str, requirement: str | None = None) -> SpaceBuild:
    """``spaces/playground`` as the Space ``ORG/kometrics-playground`` (it needs kometrics with its demo extra)."""
    _check_repo_part(org, "org")
    src = _playground_source()
    dest = Path(out_dir) / PLAYGROUND_NAME
    _copy_tree(src, dest)
    pin = default_requirement() if requirement is None else requirement.strip()
    if pin.startswith("kometrics==") or pin.startswith("kometrics "):
        pin = "kometrics[demo]" + pin[len("kometrics"):]
    reqs = src / "requirements.txt"
    (dest / "requirements.txt").write_text(space_requirements(reqs if reqs.is_file() else None, pin),
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
    builds = [build_space(name, out, org, requirement) for name in names]
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
    requirement = None if args.kometrics_requirement is None else (
        "" if args.kometrics_requirement.lower() == "none" else args.kometrics_requirement)
    try:
        builds = publish(args.org, args.out, names=args.only, dry_run=args.dry_run, requirement=requirement,
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
                   help=f"the kometrics line of each requirements.txt (default: {default_requirement()}; "
                        "e.g. 'kometrics @ git+https://...@v0.1.0'; 'none' leaves it out)")
    p.set_defaults(func=cmd_publish, allow_extra=False)
