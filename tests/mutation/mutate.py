"""Mutation check: plant known bugs, one at a time, in a copy of the checkout and run the tests that must catch
them. ``make mutation`` runs it; it is not part of the default test run.

Each mutation is an exact source-text replacement in one file. When the text is not found exactly once the
script stops with an error, so that it notices when the code moves. The copy is made in a temporary folder
(tracked and untracked, not ignored, files of the checkout) and the tests run there with the same virtual
environment, installing nothing: a ``sitecustomize`` module on ``PYTHONPATH`` puts an import finder first that
maps ``kometrics`` to the copy's ``metrics/`` and ``kometrics.datasets_scripts`` to its ``datasets_scripts/``
(the editable install of the checkout would otherwise win). This is verified twice: in a plain interpreter
and, through the ``_mutation_probe`` pytest plugin, inside every pytest run (which stops otherwise).

First the selected tests run on the unmutated copy and must pass; then every mutation runs them with ``-x``.
A mutation is *caught* when pytest reports a failing test (exit status 1), *survived* when all pass, and an
*error* otherwise (collection error, missing test, ...). The script prints a table and exits non-zero if any
mutation survived or errored.

    python tests/mutation/mutate.py                 # all mutations
    python tests/mutation/mutate.py --list          # names and targets; checks that every text is found
    python tests/mutation/mutate.py --only lmre-app-always-rejects-http --keep
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str  # file, relative to the repository root
    old: str  # exact text, found exactly once
    new: str
    tests: tuple[str, ...]  # pytest targets (files or node ids), relative to the repository root
    what: str


KLUE = "metrics/klue_sts/scoring.py"
KBS_SCORING = "metrics/korbertscore/scoring.py"
KBS_EMBEDDING = "metrics/korbertscore/embedding.py"
PPL_SCORING = "metrics/perplexity/scoring.py"
PPL_MODELING = "metrics/perplexity/modeling.py"
MERGE = "metrics/merge_sv_accuracy/scoring.py"
LMRE = "metrics/lmre/scoring.py"
LMRE_APP = "metrics/lmre/app.py"
LMRE_BROWSER = "tests/spaces/test_metric_apps.py::test_metric_space_answers_in_the_browser[lmre]"

MUTATIONS: tuple[Mutation, ...] = (
    Mutation("klue-binarize-strict", KLUE,
             "return np.asarray(scores) >= threshold", "return np.asarray(scores) > threshold",
             ("tests/klue_sts/test_klue_sts.py",), "klue_sts binarisation >= 3.0 becomes > 3.0 (scoring)"),
    Mutation("klue-bootstrap-f1-strict", KLUE,
             "p, r = x >= threshold, y >= threshold", "p, r = x > threshold, y > threshold",
             ("tests/klue_sts/test_klue_sts.py",), "klue_sts binarisation >= becomes > inside the bootstrap F1"),
    Mutation("korbertscore-idf-counts-repeats", KBS_SCORING,
             "df.update(set(ids))", "df.update(ids)",
             ("tests/korbertscore/test_behaviour.py", "tests/korbertscore/test_parity.py"),
             "idf document frequency counts a piece once per occurrence, not once per sentence"),
    Mutation("korbertscore-precision-by-piece-count", KBS_SCORING,
             "precision = (best_for_cand * cw).sum(-1) / cw.sum(-1)",
             "precision = (best_for_cand * cw).sum(-1) / cv.sum(-1)",
             ("tests/korbertscore/test_behaviour.py", "tests/korbertscore/test_parity.py"),
             "precision divided by the number of candidate pieces instead of their total weight"),
    Mutation("korbertscore-earliest-window", KBS_EMBEDDING,
             "best = margin.argmax(axis=1)", "best = (margin >= 0).argmax(axis=1)",
             ("tests/korbertscore/test_behaviour.py",),
             "a long text's piece taken from the earliest window holding it, not the most central one"),
    Mutation("perplexity-corpus-mean-of-ratios", PPL_SCORING,
             '"corpus_perplexity": perplexity(total_nll, total_tokens),',
             '"corpus_perplexity": math.exp(math.fsum(nll_sums[i] / token_counts[i] for i in keep) / len(keep)),',
             ("tests/perplexity/test_causal.py",),
             "corpus perplexity from the mean of per-text NLL/token ratios instead of sum NLL / sum tokens"),
    Mutation("perplexity-position-ids-ignore-padding", PPL_MODELING,
             'kwargs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0).to(device)',
             'kwargs["position_ids"] = torch.arange(width).expand(len(rows), width).to(device)',
             ("tests/perplexity/test_causal.py",), "position ids count padding (left padding shifts positions)"),
    Mutation("perplexity-label-shift-0", PPL_MODELING,
             'shift = 1 if r.predict_from == "previous" else 0', "shift = 0",
             ("tests/perplexity/test_causal.py",), "causal label shift 0 instead of 1"),
    Mutation("merge-pass-strict", MERGE,
             "passes = c[:, None] * den[None, :] >= num[None, :] * n[:, None]",
             "passes = c[:, None] * den[None, :] > num[None, :] * n[:, None]",
             ("tests/merge_sv_accuracy/test_metric.py",), "SV pass test c/n >= CT becomes >"),
    Mutation("merge-mc-ties-to-lower-ct", MERGE,
             "return float(cts[int(best[-1])])", "return float(cts[int(best[0])])",
             ("tests/merge_sv_accuracy/test_metric.py",), "matching correctness ties go to the lower CT"),
    Mutation("lmre-typed-f1-ignores-type", LMRE,
             "both = (h & r) if break_types == \"binary\" else ((hyp == ref) & r)", "both = h & r",
             ("tests/lmre/test_scoring.py",), "typed F1 counts a boundary of the other type as a match"),
    Mutation("lmre-empty-vs-empty-is-0", LMRE,
             "return np.where(denom == 0, 1.0, 2.0 * tp / np.maximum(denom, 1))",
             "return np.where(denom == 0, 0.0, 2.0 * tp / np.maximum(denom, 1))",
             ("tests/lmre/test_scoring.py",), "F1 of two annotations without boundaries is 0 instead of 1"),
    Mutation("lmre-accept-at-theta", LMRE,
             "accepted = best > theta", "accepted = best >= theta",
             ("tests/lmre/test_scoring.py",), "acceptance best > theta becomes >="),
    Mutation("lmre-app-always-rejects-http", LMRE_APP,
             'verdict = "✅ accepted" if result["accepted"] else "❌ rejected"', 'verdict = "❌ rejected"',
             ("tests/lmre/test_app.py",), "the LMRE Space always shows 'rejected' (its HTTP test)"),
    Mutation("lmre-app-always-rejects-browser", LMRE_APP,
             'verdict = "✅ accepted" if result["accepted"] else "❌ rejected"', 'verdict = "❌ rejected"',
             (LMRE_BROWSER,), "the LMRE Space always shows 'rejected' (its browser test)"),
)

SITECUSTOMIZE = '''\
"""Written by tests/mutation/mutate.py: import kometrics from the mutation copy, not the installed checkout."""
import importlib.util
import sys

_MAPPING = {{"kometrics": {metrics!r}, "kometrics.datasets_scripts": {datasets!r}}}


class _MutationCopyFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        root = _MAPPING.get(fullname)
        if root is None:
            return None
        return importlib.util.spec_from_file_location(fullname, root + "/__init__.py",
                                                      submodule_search_locations=[root])


sys.meta_path.insert(0, _MutationCopyFinder)
'''

PROBE = '''\
"""Written by tests/mutation/mutate.py: stop the pytest run unless it imports the mutation copy."""
from pathlib import Path

import pytest

COPY = Path({copy!r})


def _inside(module) -> bool:
    return Path(module.__file__).resolve().is_relative_to(COPY)


def pytest_sessionstart(session):
    import kometrics
    import kometrics.datasets_scripts
    import tests.conftest

    bad = [m.__name__ + " from " + m.__file__ for m in (kometrics, kometrics.datasets_scripts, tests.conftest)
           if not _inside(m)]
    if bad:
        pytest.exit("mutation run does not import the copy: " + "; ".join(bad), returncode=3)
'''


def copy_checkout(dest: Path) -> None:
    """Tracked and untracked (not ignored) files of the checkout, as they are on disk, into ``dest``."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                                capture_output=True, check=True).stdout.decode().split("\0")
        files = [f for f in listed if f and (REPO / f).is_file()]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "__pycache__", ".pytest_cache", "build"}
        files = [p.relative_to(REPO).as_posix() for p in REPO.rglob("*")
                 if p.is_file() and not skip & set(p.relative_to(REPO).parts)
                 and not any(part.endswith(".egg-info") for part in p.relative_to(REPO).parts)]
    for f in files:
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, dest / f)


def environment(work: Path, copy: Path) -> dict[str, str]:
    site = work / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        SITECUSTOMIZE.format(metrics=str(copy / "metrics"), datasets=str(copy / "datasets_scripts")), encoding="utf-8")
    (site / "_mutation_probe.py").write_text(PROBE.format(copy=str(copy)), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    env["HF_MODULES_CACHE"] = str(work / "hf-modules")  # mutated evaluate modules never reach the user's cache
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    if "KOMETRICS_DATA" not in env and (REPO.parent / "shared" / "data").is_dir():
        env["KOMETRICS_DATA"] = str(REPO.parent / "shared" / "data")
    return env


def check_imports(copy: Path, env: dict[str, str]) -> None:
    """A plain interpreter with this environment imports kometrics from the copy (or the script stops)."""
    code = textwrap.dedent("""
        import kometrics, kometrics.datasets_scripts, kometrics.klue_sts.scoring
        print(kometrics.__file__); print(kometrics.datasets_scripts.__file__); print(kometrics.klue_sts.scoring.__file__)
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=copy, env=env, capture_output=True, text=True)
    paths = [Path(p).resolve() for p in out.stdout.split()]
    if out.returncode != 0 or len(paths) != 3 or not all(p.is_relative_to(copy.resolve()) for p in paths):
        sys.exit(f"the copy is not what gets imported:\n{out.stdout}{out.stderr}")
    print(f"imports from the copy: {', '.join(str(p) for p in paths)}")


def run_pytest(copy: Path, env: dict[str, str], targets: tuple[str, ...], first_failure: bool) -> tuple[int, str, float]:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "_mutation_probe",
           *(["-x"] if first_failure else []), *targets]
    start = time.monotonic()
    out = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr, time.monotonic() - start


def plant(copy: Path, m: Mutation) -> str:
    """Replace ``m.old`` by ``m.new`` in the copy; return the original text. Stops if not found exactly once."""
    path = copy / m.path
    text = path.read_text(encoding="utf-8")
    count = text.count(m.old)
    if count != 1:
        sys.exit(f"mutation {m.name}: the text {m.old!r} occurs {count} times in {m.path} (expected once); "
                 "the code moved: update tests/mutation/mutate.py")
    path.write_text(text.replace(m.old, m.new), encoding="utf-8")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="run only these mutations")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--no-baseline", action="store_true", help="skip the run on the unmutated copy")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy (its path is printed)")
    args = parser.parse_args(argv)
    names = {m.name for m in MUTATIONS}
    unknown = set(args.only) - names
    if unknown:
        parser.error(f"unknown mutation(s) {sorted(unknown)}; known: {sorted(names)}")
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    counts = {m.name: (REPO / m.path).read_text(encoding="utf-8").count(m.old) for m in chosen}
    if args.list:
        for m in chosen:
            found = "ok" if counts[m.name] == 1 else f"TEXT FOUND {counts[m.name]} TIMES"
            print(f"{m.name:40s} {found:3s} {m.path}: {m.what}\n{'':44s} tests: {' '.join(m.tests)}")
        return 0 if all(c == 1 for c in counts.values()) else 1
    for m in chosen:  # every target text must be in the checkout itself before anything runs
        if counts[m.name] != 1:
            sys.exit(f"mutation {m.name}: the text {m.old!r} occurs {counts[m.name]} times in {m.path} (expected "
                     "once); the code moved: update tests/mutation/mutate.py")
    work = Path(tempfile.mkdtemp(prefix="kometrics-mutation-"))
    copy = work / "kometrics"
    try:
        copy_checkout(copy)
        env = environment(work, copy)
        check_imports(copy, env)
        targets = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
        if not args.no_baseline:
            rc, log, secs = run_pytest(copy, env, targets, first_failure=False)
            if rc != 0:
                print(log[-6000:])
                sys.exit(f"the tests fail (exit {rc}) on the unmutated copy: fix them first")
            print(f"unmutated copy: tests pass ({secs:.0f} s)")
        rows = []
        for m in chosen:
            original = plant(copy, m)
            try:
                rc, log, secs = run_pytest(copy, env, m.tests, first_failure=True)
            finally:
                (copy / m.path).write_text(original, encoding="utf-8")
            failed = re.findall(r"^FAILED (\S+)", log, flags=re.M)
            result = {0: "SURVIVED", 1: "caught"}.get(rc, f"ERROR (exit {rc})")
            rows.append((m.name, result, f"{secs:.0f}s", failed[0] if failed else ""))
            print(f"{m.name}: {result} ({secs:.0f} s) {failed[0] if failed else ''}", flush=True)
            if rc not in (0, 1):
                print(log[-4000:])
        widths = [max(len(r[i]) for r in rows + [("mutation", "result", "time", "first failing test")])
                  for i in range(4)]
        print()
        for row in [("mutation", "result", "time", "first failing test"), tuple("-" * w for w in widths), *rows]:
            print(" | ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        bad = [r for r in rows if r[1] != "caught"]
        print(f"\n{len(rows) - len(bad)} of {len(rows)} mutations caught")
        return 1 if bad else 0
    finally:
        if args.keep:
            print(f"copy kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
