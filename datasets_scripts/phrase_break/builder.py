"""The LMRE reference builder: a multi-reference lookup R(W) for each utterance, built once by an LLM.

The defaults follow the LMRE paper's best configuration (LMRE, N_iter=40, |P_FS|=128, batch size 32,
temperature 0.0): for ``n_iter`` (40) iterations, the utterances are sent in batches of ``batch_size`` (32)
with a few-shot set re-sampled for every request (``few_shot_size``, default half the few-shot pool;
seeded) from the few-shot pool P_FS, which is ``pool_size`` (128) annotations drawn once (seeded) from the
given pool when it has more, else the whole pool. Each answer gives one annotation per utterance; the
distinct annotations are counted over the iterations and those produced at least
``min_count = ceil(n_iter / 10)`` times are kept (with ``n_iter <= 10`` that is 1: the filter keeps every
one-off answer, and a warning says so). Temperature 0 by default: diversity comes from the re-sampled
few-shot sets.

Robustness: every response is written to a disk cache as it arrives (atomic write: temporary file, then
``os.replace``), so an interrupted build (crash, Ctrl-C) loses nothing and a rerun asks only what is
missing; timeouts, rate limits (429) and server errors (5xx) are retried with exponential backoff; at most
``concurrency`` requests run at once. Answer lines that do not parse, or whose words differ from the
utterance, are discarded and counted, never repaired.

Backends: :class:`OpenAIChatLLM` (any OpenAI-compatible chat endpoint through the ``openai`` SDK; the API
key is read from an environment variable) and any Python callable ``llm(messages, temperature) -> str``
(wrapped by :class:`CallableLLM`).

Secrets: the API key, any ``Authorization``/``Bearer``/``Basic`` value and credentials in the base URL
(``http://user:pass@host/v1``) are redacted (:func:`redact`) from every log line, stored error, cache file,
build record (``build_info.json``) and card; the stored base URL has no credentials (:func:`public_url`),
even when the endpoint echoes the request headers back in an error.

This module is not imported by the metric (``lmre.py``) and imports ``openai`` only when that backend is used.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import os
import random
import re
import tempfile
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from kometrics.cli.io import iter_jsonl, read_lines
from kometrics.lmre.formats import AnnotationError, canonicalize, parse_annotation
from kometrics.lmre.lookup import REFERENCES_FILE

__all__ = [
    "Utterance",
    "BuildConfig",
    "BuildError",
    "RetryableError",
    "CallableLLM",
    "OpenAIChatLLM",
    "read_utterances",
    "read_pool",
    "build_messages",
    "parse_response",
    "build_references",
    "redact",
    "public_url",
]

logger = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You annotate prosodic phrase breaks of Korean sentences for text-to-speech. For each sentence, copy its "
    "words exactly and in order, and write ' / ' after a word that is followed by an accentual-phrase boundary "
    "and ' // ' after a word that is followed by an intonation-phrase boundary. Do not change, add, remove or "
    "re-space any word or punctuation mark. Answer with exactly one line per sentence, in the form "
    "'<number>. <annotated sentence>', and nothing else."
)
_LINE = re.compile(r"^\s*(\d+)\s*[.):]\s*(.*?)\s*$")


# --- secrets ----------------------------------------------------------------------------------------------

REDACTED = "***"
_URL_USERINFO = re.compile(r"(?<=://)[^/@\s\"']+@")
_AUTH_SCHEME = re.compile(r"(?i)\b(bearer|basic)(\s+|%20)[^\s\"',;}\]]+")
_AUTH_FIELD = re.compile(r"""(?i)((?:proxy-)?authorization|api[-_]?key|x-api-key)(["']?\s*[:=]\s*["']?)"""
                         r"""((?:bearer|basic)\s+)?[^\s"',;}\]]+""")


def public_url(url: str | None) -> str | None:
    """``url`` without credentials (``http://user:pass@host/v1`` -> ``http://host/v1``)."""
    if not url:
        return url
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def redact(text: str, secrets: Sequence[str] = (), generic: bool = True) -> str:
    """``text`` with every secret in ``secrets`` replaced by ``***``; with ``generic`` also URL credentials
    (``user:pass@``) and the values of ``Authorization``/``Bearer``/``Basic``/``api-key`` fields."""
    for secret in sorted((x for x in secrets if x), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    if not generic:
        return text
    text = _URL_USERINFO.sub(f"{REDACTED}@", text)
    text = _AUTH_FIELD.sub(lambda m: m.group(1) + m.group(2) + (m.group(3) or "") + REDACTED, text)
    return _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)


def _redact(backend: Any, text: str, generic: bool = True) -> str:
    """What ``backend`` knows of its own secrets (and, with ``generic``, the generic patterns) removed."""
    own = getattr(backend, "redact", None)
    return own(text, generic=generic) if callable(own) else redact(text, generic=generic)


class RetryableError(Exception):
    """Raise from a callable backend to have the request retried (like a timeout or HTTP 429/5xx)."""


class BuildError(RuntimeError):
    """Some requests still failed after all retries; their answers are missing (rerun to ask them again)."""


@dataclass(frozen=True)
class Utterance:
    id: str
    words: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.words)


@dataclass
class BuildConfig:
    """Options of a build (written to ``build_info.json``; they determine the prompts and so the cache keys)."""

    n_iter: int = 40  # the LMRE paper's best configuration (N_iter=40)
    pool_size: int | None = 128  # |P_FS|: annotations drawn once from a larger pool; None: the whole pool
    few_shot_size: int | None = None  # None: half the few-shot pool (at least 1)
    batch_size: int = 32
    min_count: int | None = None  # None: ceil(n_iter / 10)
    temperature: float = 0.0
    seed: int = 0
    concurrency: int = 4
    max_retries: int = 5
    backoff_base: float = 1.0  # seconds; attempt k waits backoff_base * 2**k (capped), with jitter
    backoff_max: float = 60.0
    allow_failures: bool = False

    def resolved(self, pool_size: int) -> BuildConfig:
        cfg = BuildConfig(**asdict(self))
        if cfg.n_iter < 1:
            raise ValueError(f"n_iter must be >= 1, got {cfg.n_iter}")
        if cfg.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {cfg.batch_size}")
        if cfg.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {cfg.concurrency}")
        if cfg.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {cfg.max_retries}")
        if cfg.pool_size is not None and cfg.pool_size < 1:
            raise ValueError(f"pool_size must be >= 1 (or None for the whole pool), got {cfg.pool_size}")
        pool_size = few_shot_pool_size(pool_size, cfg.pool_size)
        if cfg.few_shot_size is None:
            cfg.few_shot_size = max(1, pool_size // 2) if pool_size else 0
        if not 0 <= cfg.few_shot_size <= pool_size:
            raise ValueError(f"few_shot_size={cfg.few_shot_size} but the pool has {pool_size} annotations")
        if cfg.min_count is None:
            cfg.min_count = math.ceil(cfg.n_iter / 10)
        if not 1 <= cfg.min_count <= cfg.n_iter:
            raise ValueError(f"min_count must be in [1, n_iter={cfg.n_iter}], got {cfg.min_count}")
        if cfg.min_count == 1 and cfg.n_iter > 1:
            warnings.warn(f"lmre build: min_count is 1 (n_iter={cfg.n_iter}), so the N_iter/10 filter is off and "
                          "every one-off answer is kept; the LMRE paper's setting is n_iter=40 (min_count 4)",
                          stacklevel=3)
        return cfg


def few_shot_pool_size(available: int, pool_size: int | None) -> int:
    """|P_FS|: ``pool_size`` annotations when the given pool has more, else all ``available`` of them."""
    return available if pool_size is None else min(available, pool_size)


def few_shot_pool(pool: Sequence[str], pool_size: int | None, seed: int) -> list[str]:
    """The few-shot pool P_FS: ``pool_size`` annotations drawn once (seeded, order kept) from ``pool`` when it
    has more, else the whole pool."""
    n = few_shot_pool_size(len(pool), pool_size)
    if n == len(pool):
        return list(pool)
    keep = sorted(random.Random(f"lmre-pool-{seed}").sample(range(len(pool)), n))
    return [pool[i] for i in keep]


# --- backends ----------------------------------------------------------------------------------------------

class CallableLLM:
    """A plain Python callable ``fn(messages, temperature) -> str`` as a backend.

    ``TimeoutError``, ``ConnectionError`` and :class:`RetryableError` raised by it are retried; other
    exceptions fail the request at once. ``name`` enters the cache key (default: the function's qualified name).
    """

    def __init__(self, fn: Callable[[list[dict[str, str]], float], str], name: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"llm must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.name = name or getattr(fn, "name", None) or (
            f"callable:{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}")

    def __call__(self, messages: list[dict[str, str]], temperature: float) -> str:
        return self.fn(messages, temperature)

    def is_retryable(self, exc: BaseException) -> bool:
        return isinstance(exc, (RetryableError, TimeoutError, ConnectionError))

    def retry_after(self, exc: BaseException) -> float | None:
        return None

    def __repr__(self) -> str:
        return f"CallableLLM({self.name!r})"


class OpenAIChatLLM:
    """Any OpenAI-compatible chat-completions endpoint through the ``openai`` SDK.

    The API key is read from the environment variable ``api_key_env`` (default ``OPENAI_API_KEY``); it is
    never logged, printed, cached or written (:meth:`redact` removes it, and any Authorization value, from
    error messages). ``api_key_env=None`` sends a placeholder key (local servers that need none).
    Credentials in ``base_url`` (``http://user:pass@host/v1``) are sent as HTTP basic auth, as httpx does
    with them, and are kept out of ``base_url``, ``name`` and every log line. The SDK's own retries are
    switched off: the builder retries (timeouts, 429, 5xx).
    """

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str | None = "OPENAI_API_KEY",
                 timeout: float = 60.0, max_tokens: int | None = None) -> None:
        import openai

        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise ValueError(f"the environment variable {api_key_env} holding the API key is not set; set it "
                                 "or pass api_key_env=None for an endpoint without a key")
        else:
            key = "no-key"
        self._secrets: list[str] = [key] if api_key_env else []
        http_client = None
        parts = urlsplit(base_url) if base_url else None
        if parts is not None and (parts.username is not None or parts.password is not None):
            user, password = unquote(parts.username or ""), unquote(parts.password or "")
            basic = base64.b64encode(f"{user}:{password}".encode()).decode()
            self._secrets += [password, parts.password or "", f"{user}:{password}", basic]
            http_client = openai.DefaultHttpxClient(auth=(user, password))
        self.model = model
        self.base_url = public_url(base_url)
        self.api_key_env = api_key_env
        self.max_tokens = max_tokens
        self.name = f"openai:{self.base_url or 'https://api.openai.com/v1'}:{model}"
        self._openai = openai
        try:
            self._client = openai.OpenAI(api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0,
                                         http_client=http_client)
        except Exception as e:  # noqa: BLE001 - the message may hold the URL or the key
            raise type(e)(self.redact(str(e))) from None

    def redact(self, text: str, generic: bool = True) -> str:
        """``text`` without this backend's key and URL credentials (and, with ``generic``, without any URL
        credentials or Authorization value)."""
        return redact(text, self._secrets, generic)

    def __call__(self, messages: list[dict[str, str]], temperature: float) -> str:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": temperature}
        if self.max_tokens:
            kwargs["max_tokens"] = self.max_tokens
        response = self._client.chat.completions.create(**kwargs)
        if not response.choices:
            raise RetryableError("the endpoint returned no choices")
        return response.choices[0].message.content or ""

    def is_retryable(self, exc: BaseException) -> bool:
        o = self._openai
        if isinstance(exc, (o.APITimeoutError, o.APIConnectionError, o.RateLimitError, o.InternalServerError,
                            RetryableError, TimeoutError)):
            return True
        return isinstance(exc, o.APIStatusError) and (exc.status_code == 429 or exc.status_code >= 500)

    def retry_after(self, exc: BaseException) -> float | None:
        response = getattr(exc, "response", None)
        value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None

    def __repr__(self) -> str:  # no key here, ever
        return f"OpenAIChatLLM(model={self.model!r}, base_url={self.base_url!r}, api_key_env={self.api_key_env!r})"


def _as_backend(llm: Any) -> Any:
    if isinstance(llm, (CallableLLM, OpenAIChatLLM)) or (hasattr(llm, "is_retryable") and hasattr(llm, "name")):
        return llm
    return CallableLLM(llm)


# --- inputs ------------------------------------------------------------------------------------------------

def _read_lines(path: str | os.PathLike) -> list[tuple[int, Any]]:
    """``(line number, value)`` of the non-blank lines (UTF-8 with or without a BOM; lines end at \\n / \\r\\n)."""
    path = Path(path)
    if path.suffix == ".jsonl":
        return list(iter_jsonl(path))
    return [(n, line.strip()) for n, line in enumerate(read_lines(path), 1) if line.strip()]


def read_utterances(path: str | os.PathLike) -> list[Utterance]:
    """Utterances from a ``.jsonl`` file (``id`` and ``words`` or ``text``; e.g. the corpus's
    ``utterances.jsonl``) or a text file (one sentence a line, ids ``line-<n>``). Boundary marks in a text are
    removed (only the words count). Duplicate ids raise."""
    out: list[Utterance] = []
    seen: set[str] = set()
    for n, item in _read_lines(path):
        if isinstance(item, dict):
            uid = str(item.get("id", f"line-{n}"))
            raw = item.get("words", item.get("text"))
        else:
            uid, raw = f"line-{n}", item
        if isinstance(raw, list):
            raw = " ".join(str(w) for w in raw)
        if not isinstance(raw, str):
            raise ValueError(f"{path}:{n}: an utterance needs 'words' (a list) or 'text' (a string)")
        try:
            words = parse_annotation(raw, name=f"{path}:{n}").words
        except AnnotationError as e:
            raise ValueError(str(e)) from None
        if uid in seen:
            raise ValueError(f"{path}:{n}: duplicate utterance id {uid!r}")
        seen.add(uid)
        out.append(Utterance(uid, words))
    return out


def read_pool(path: str | os.PathLike) -> list[str]:
    """Few-shot annotations from a ``.jsonl`` file (key ``annotation``; e.g. the corpus's ``pool.jsonl``) or a
    text file (one annotation a line), checked and canonicalised; a malformed one raises with its line."""
    out = []
    for n, item in _read_lines(path):
        text = item.get("annotation") if isinstance(item, dict) else item
        if not isinstance(text, str):
            raise ValueError(f"{path}:{n}: a pool row needs an 'annotation' string")
        out.append(canonicalize(text, name=f"{path}:{n}"))
    return out


# --- prompts and answers -----------------------------------------------------------------------------------

def build_messages(batch: Sequence[Utterance], few_shot: Sequence[str]) -> list[dict[str, str]]:
    """Chat messages for one request: instructions, the few-shot annotations, the numbered utterances."""
    parts = []
    if few_shot:
        parts.append("Examples of annotated sentences:")
        parts.extend(few_shot)
        parts.append("")
    parts.append(f"Annotate these {len(batch)} sentences:")
    parts.extend(f"{k}. {u.text}" for k, u in enumerate(batch, 1))
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(parts)}]


def parse_response(text: str, batch: Sequence[Utterance]) -> tuple[dict[int, str], dict[int, str], Counter]:
    """``(answers, dropped, stats)`` of one response to a batch.

    ``answers``: {position in batch (0-based): canonical annotation}. A line ``<k>. <annotation>`` answers
    utterance ``k`` (1-based). ``dropped``: {position: reason} for the utterances without an answer:
    ``malformed`` (does not parse), ``words_mismatch`` (other words than the utterance), ``duplicate`` (two
    lines for the same number: both dropped), ``missing`` (no line). ``stats`` counts these and ``valid``,
    ``out_of_range`` (a number not in the batch) and ``unnumbered`` (a non-empty line that is not
    ``<k>. ...``; code fences are ignored). Nothing is repaired.
    """
    stats: Counter = Counter()
    lines: dict[int, list[str]] = {}
    for line in (text or "").splitlines():
        if not line.strip() or line.strip().startswith("```"):
            continue
        m = _LINE.match(line)
        if not m:
            stats["unnumbered"] += 1
            continue
        k = int(m.group(1))
        if not 1 <= k <= len(batch):
            stats["out_of_range"] += 1
            continue
        lines.setdefault(k, []).append(m.group(2))
    answers: dict[int, str] = {}
    dropped: dict[int, str] = {}
    for k in range(1, len(batch) + 1):
        got = lines.get(k)
        if not got:
            dropped[k - 1] = "missing"
        elif len(got) > 1:
            dropped[k - 1] = "duplicate"
        else:
            try:
                ann = parse_annotation(got[0])
            except (AnnotationError, TypeError):
                dropped[k - 1] = "malformed"
            else:
                if ann.words != batch[k - 1].words:
                    dropped[k - 1] = "words_mismatch"
                else:
                    answers[k - 1] = canonicalize(got[0])
    stats.update(dropped.values())
    if answers:
        stats["valid"] += len(answers)
    return answers, dropped, stats


# --- cache -------------------------------------------------------------------------------------------------

def _atomic_write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f, ensure_ascii=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _read_cached(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
        return rec["response"] if isinstance(rec.get("response"), str) else None
    except (OSError, ValueError, KeyError, AttributeError):
        return None


@dataclass
class _Job:
    iteration: int
    batch: int
    utterances: list[Utterance]
    messages: list[dict[str, str]]
    key: str
    response: str | None = None
    error: str | None = None
    retries: int = 0
    cached: bool = False


@dataclass
class _Stats:
    requests: int = 0
    cached: int = 0
    asked: int = 0
    retries: int = 0
    failed: int = 0
    answers: Counter = field(default_factory=Counter)


def _request_key(name: str, messages: list[dict[str, str]], temperature: float) -> str:
    blob = json.dumps({"model": name, "messages": messages, "temperature": temperature}, ensure_ascii=False,
                      sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _ask(backend: Any, job: _Job, cfg: BuildConfig, cache_dir: Path, stop: threading.Event) -> _Job:
    rng = random.Random(job.key)
    for attempt in range(cfg.max_retries + 1):
        if stop.is_set():
            job.error = "cancelled"
            return job
        try:
            text = backend(job.messages, cfg.temperature)
        except Exception as exc:  # noqa: BLE001 - classified below
            if not backend.is_retryable(exc) or attempt == cfg.max_retries:
                job.error = _redact(backend, f"{type(exc).__name__}: {exc}")[:500]  # servers echo headers back
                return job
            delay = min(cfg.backoff_max, cfg.backoff_base * 2 ** attempt) * (0.5 + rng.random())
            hint = backend.retry_after(exc)
            if hint is not None:
                delay = min(cfg.backoff_max, max(delay, hint))
            logger.info("request %s (iteration %d, batch %d) failed with %s; retry %d in %.2fs", job.key[:12],
                        job.iteration, job.batch, type(exc).__name__, attempt + 1, delay)
            job.retries += 1
            if stop.wait(delay):
                job.error = "cancelled"
                return job
            continue
        if not isinstance(text, str):
            job.error = f"the backend returned {type(text).__name__}, not a string"
            return job
        text = _redact(backend, text, generic=False)  # this backend's secrets echoed in an answer: not cached
        _atomic_write_json(cache_dir / f"{job.key}.json", {
            "key": job.key, "model": backend.name, "iteration": job.iteration, "batch": job.batch,
            "utterance_ids": [u.id for u in job.utterances], "response": text, "time": time.time()})
        job.response = text
        return job
    return job  # pragma: no cover


# --- the build ---------------------------------------------------------------------------------------------

def _plan(utterances: Sequence[Utterance], pool: Sequence[str], cfg: BuildConfig, name: str) -> list[_Job]:
    jobs = []
    batches = [list(utterances[i:i + cfg.batch_size]) for i in range(0, len(utterances), cfg.batch_size)]
    for it in range(cfg.n_iter):
        for b, batch in enumerate(batches):
            rng = random.Random(f"lmre:{cfg.seed}:{it}:{b}")
            few = rng.sample(list(pool), cfg.few_shot_size) if cfg.few_shot_size else []
            messages = build_messages(batch, few)
            jobs.append(_Job(it, b, batch, messages, _request_key(name, messages, cfg.temperature)))
    return jobs


def _card(name: str, cfg: BuildConfig, n: int) -> str:
    return f"""---
pretty_name: LMRE references
tags:
- lmre
- phrase-break
configs:
- config_name: default
  data_files: {REFERENCES_FILE}
---

# LMRE reference set

Multi-reference lookup R(W) for {n} utterances, built by `kometrics lmre build` with `{name}`
(n_iter={cfg.n_iter}, few-shot pool size {cfg.pool_size}, few-shot size {cfg.few_shot_size}, batch size {cfg.batch_size},
temperature {cfg.temperature:g}, seed {cfg.seed}, kept annotations produced at least min_count={cfg.min_count}
times). Read it with `kometrics.lmre.load_references(folder)` or `datasets.load_dataset(folder)`.

Fields of `{REFERENCES_FILE}`: `id`, `text`, `words`, `references` (canonical annotations, most frequent
first), `counts` (iterations that produced each), `n_iter`, `n_valid` (iterations with a usable answer),
`discarded` (answers dropped, by reason). `build_info.json` has the options and request statistics.
"""


def build_references(utterances: Sequence[Utterance] | Sequence[str], pool: Sequence[str], out_dir: str | os.PathLike,
                     llm: Any, config: BuildConfig | None = None, cache_dir: str | os.PathLike | None = None,
                     progress: bool = False, **options: Any) -> dict[str, Any]:
    """Build the reference folder ``out_dir`` and return its ``build_info`` (options and statistics).

    Args:
        utterances: :class:`Utterance` objects, or sentences (ids ``utt-<i>``).
        pool: few-shot annotations (canonical strings).
        out_dir: folder to write (``README.md``, ``references.jsonl``, ``build_info.json``).
        llm: an :class:`OpenAIChatLLM`, a :class:`CallableLLM` or a plain callable ``(messages, temperature) -> str``.
        config: a :class:`BuildConfig`; keyword ``options`` override its fields (``n_iter=40`` ...).
        cache_dir: response cache (default ``out_dir/cache``); reuse it to resume.
        progress: show a tqdm bar.

    Raises :class:`BuildError` when requests still fail after the retries (unless ``allow_failures``: then
    the folder is written from the answers that came, with a warning). Every successful response is in the
    cache either way, so a rerun only asks the missing ones.
    """
    cfg = BuildConfig(**{**asdict(config or BuildConfig()), **options}) if options or config is None else config
    pool = [canonicalize(p, name=f"pool[{i}]") for i, p in enumerate(pool)]
    given_pool = len(pool)
    cfg = cfg.resolved(given_pool)
    pool = few_shot_pool(pool, cfg.pool_size, cfg.seed)
    utts = [u if isinstance(u, Utterance) else Utterance(f"utt-{i}", parse_annotation(u, name=f"utterances[{i}]").words)
            for i, u in enumerate(utterances)]
    if not utts:
        raise ValueError("no utterances to annotate")
    if len({u.id for u in utts}) != len(utts):
        raise ValueError("utterance ids must be unique")
    backend = _as_backend(llm)
    out = Path(out_dir)
    cache = Path(cache_dir) if cache_dir is not None else out / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    jobs = _plan(utts, pool, cfg, backend.name)
    stats = _Stats(requests=len(jobs))
    # identical prompts (the same few-shot sample drawn twice) are asked once and count for each iteration
    unique: dict[str, _Job] = {}
    for job in jobs:
        unique.setdefault(job.key, job)
    todo = []
    for job in unique.values():
        cached = _read_cached(cache / f"{job.key}.json")
        if cached is not None:
            job.response, job.cached = cached, True
            stats.cached += 1
        else:
            todo.append(job)
    logger.info("lmre build: %d requests (%d distinct), %d cached, %d to ask %s", len(jobs), len(unique),
                stats.cached, len(todo), backend.name)
    stop = threading.Event()
    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="lmre build", unit="request")
    executor = ThreadPoolExecutor(max_workers=cfg.concurrency, thread_name_prefix="lmre-build")
    try:
        pending = {executor.submit(_ask, backend, job, cfg, cache, stop) for job in todo}
        while pending:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in done:
                job = fut.result()
                stats.retries += job.retries
                if job.response is None:
                    stats.failed += 1
                    logger.warning("request %s (iteration %d, batch %d) failed: %s", job.key[:12], job.iteration,
                                   job.batch, job.error)
                else:
                    stats.asked += 1
                if bar is not None:
                    bar.update(1)
    except BaseException:
        stop.set()  # Ctrl-C: no new request starts; answers already received are in the cache
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        if bar is not None:
            bar.close()
    executor.shutdown(wait=True)
    for job in jobs:
        job.response = unique[job.key].response
    if stats.failed and not cfg.allow_failures:
        raise BuildError(f"{stats.failed} of {len(unique)} requests failed after {cfg.max_retries} retries "
                         f"({stats.asked} answered now, {stats.cached} from the cache {cache}); run again to ask "
                         "only the missing ones, or pass allow_failures=True")
    if stats.failed:
        warnings.warn(f"lmre build: {stats.failed} of {len(unique)} requests failed; the references miss "
                      "their answers (rerun with the same cache to complete them)", stacklevel=2)

    counts: dict[str, Counter] = {u.id: Counter() for u in utts}
    order: dict[str, dict[str, int]] = {u.id: {} for u in utts}
    discarded: dict[str, Counter] = {u.id: Counter() for u in utts}
    valid: Counter = Counter()
    for job in jobs:
        if job.response is None:
            for u in job.utterances:
                discarded[u.id]["failed_request"] += 1
            continue
        answers, dropped, st = parse_response(job.response, job.utterances)
        stats.answers.update(st)
        for pos, u in enumerate(job.utterances):
            if pos in answers:
                counts[u.id][answers[pos]] += 1
                order[u.id].setdefault(answers[pos], len(order[u.id]))
                valid[u.id] += 1
            else:
                discarded[u.id][dropped[pos]] += 1

    records = []
    for u in utts:
        kept = [(a, c) for a, c in counts[u.id].items() if c >= cfg.min_count]
        kept.sort(key=lambda ac: (-ac[1], order[u.id][ac[0]]))
        records.append({"id": u.id, "text": u.text, "words": list(u.words), "references": [a for a, _ in kept],
                        "counts": [c for _, c in kept], "n_iter": cfg.n_iter, "n_valid": valid[u.id],
                        "discarded": dict(discarded[u.id])})
    empty = sum(1 for r in records if not r["references"])
    if empty:
        warnings.warn(f"lmre build: {empty} of {len(records)} utterances kept no reference (no annotation reached "
                      f"min_count={cfg.min_count}); they cannot be scored. Raise n_iter or lower min_count.",
                      stacklevel=2)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{REFERENCES_FILE}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    os.replace(tmp, out / REFERENCES_FILE)
    (out / "README.md").write_text(_card(backend.name, cfg, len(records)), encoding="utf-8")
    info = {
        "llm": backend.name,
        "config": asdict(cfg),
        "utterances": len(utts),
        "pool": given_pool,
        "few_shot_pool": len(pool),
        "requests": stats.requests,
        "distinct_prompts": len(unique),
        "cached": stats.cached,
        "asked": stats.asked,
        "retries": stats.retries,
        "failed": stats.failed,
        "answers": dict(stats.answers),
        "references_per_utterance": (sum(len(r["references"]) for r in records) / len(records)),
        "utterances_without_reference": empty,
        "cache_dir": str(cache),
    }
    _atomic_write_json(out / "build_info.json", info)
    return info
