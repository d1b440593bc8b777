"""The reference builder against a local OpenAI-compatible server and with plain callables."""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from kometrics.datasets_scripts.phrase_break.builder import (
    BuildError,
    CallableLLM,
    OpenAIChatLLM,
    RetryableError,
    Utterance,
    build_messages,
    build_references,
    parse_response,
    read_pool,
    read_utterances,
)
from kometrics.lmre import load_references, references_for, score

from .fake_llm_server import FakeLLMServer, rule_annotation

SECRET = "sk-test-secret-0123456789"
SENTENCES = [
    "오늘은 날씨가 정말 좋네요",
    "나는 밥을 먹고 학교에 갔다",
    "우리 집 고양이는 낮잠을 자주 잔다",
    "비가 오면 길이 미끄럽다",
    "그는 도서관에서 책을 빌렸다",
    "내일 아침 일찍 출발하기로 했다",
    "동생이 새 자전거를 샀다",
    "이 식당은 김치찌개가 맛있다",
    "주말마다 공원에서 산책을 한다",
    "시험이 끝나면 여행을 가고 싶다",
]
POOL = ["오늘은 / 하늘이 맑다", "철수가 / 학교에 // 갔다", "저는 / 커피를 좋아해요", "바람이 불고 // 비가 온다",
        "그 영화는 / 정말 // 재미있었다", "엄마가 / 시장에 갔다", "아이들이 / 운동장에서 // 뛰어논다",
        "창문을 / 열어 주세요", "기차가 / 곧 // 도착합니다", "할머니께서 / 떡을 만드셨다", "봄이 오면 // 꽃이 핀다",
        "친구와 / 영화를 봤다"]


@pytest.fixture
def utterances():
    return [Utterance(f"u{i}", tuple(s.split())) for i, s in enumerate(SENTENCES)]


@pytest.fixture
def loopback(monkeypatch):
    """The SDK must talk to the local server directly (no proxy), with the key in an environment variable."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("LMRE_TEST_KEY", SECRET)


def _records(folder: Path) -> dict[str, dict]:
    return {r["text"]: r for r in map(json.loads, (folder / "references.jsonl").read_text("utf-8").splitlines())}


def test_openai_backend_scripted_server(tmp_path, utterances, loopback, caplog):
    caplog.set_level(logging.DEBUG)
    script = ["good", "429_first", "malformed", "500_first", "slow_first"]
    n_iter, batch_size = 10, 4
    planned = n_iter * math.ceil(len(utterances) / batch_size)
    with FakeLLMServer(key=SECRET, script=script, max_requests=3 * planned, slow_seconds=3.0) as server:
        llm = OpenAIChatLLM("fake-model", base_url=server.url, api_key_env="LMRE_TEST_KEY", timeout=1.0)
        info = build_references(utterances, POOL, tmp_path / "refs", llm, n_iter=n_iter, batch_size=batch_size,
                                min_count=3, concurrency=3, max_retries=3, backoff_base=0.01, backoff_max=0.05)
        requests = list(server.requests)
        expected = server.expected_counts()
        distinct = len(server.prompt_order)

    # every planned prompt was asked; the scripted failures were retried exactly once each
    assert planned == info["requests"] and distinct == info["distinct_prompts"] == info["asked"]
    actions = Counter(server.script[server.prompt_order[d] % len(script)] for d in server.prompt_order)
    first_failures = actions["429_first"] + actions["500_first"] + actions["slow_first"]
    # every retry is one more request; each scripted failure cost at least one (a loaded machine may add timeouts)
    assert len(requests) == distinct + info["retries"] and info["failed"] == 0
    assert info["retries"] >= first_failures
    for digest, k in server.prompt_order.items():
        if script[k % len(script)] in ("429_first", "500_first", "slow_first"):
            assert server.attempts[digest] >= 2
    # only loopback, the right path, the key from the environment, temperature 0, half the pool as few-shot
    assert {r["client"] for r in requests} == {"127.0.0.1"} and {r["path"] for r in requests} == {"/v1/chat/completions"}
    assert all(r["auth_ok"] for r in requests)
    body = requests[0]["body"]
    assert body["model"] == "fake-model" and body["temperature"] == 0.0
    assert sum(line in POOL for line in body["messages"][1]["content"].splitlines()) == len(POOL) // 2

    # counts equal what the server served; malformed / mismatched / missing answers are discarded and counted
    sizes = [len(server.served[d]) for d, k in server.prompt_order.items() if script[k % len(script)] == "malformed"]
    assert info["answers"]["malformed"] == sum(n >= 1 for n in sizes)  # line 1: a boundary first
    assert info["answers"]["words_mismatch"] == sum(n >= 2 for n in sizes)  # line 2: an extra word
    assert info["answers"]["missing"] == sum(n >= 3 for n in sizes)  # line 3: left out
    assert info["answers"]["unnumbered"] == len(sizes)  # the chatty first line
    records = _records(tmp_path / "refs")
    for text, rec in records.items():
        counts = expected.get(text, Counter())
        assert dict(zip(rec["references"], rec["counts"])) == {a: c for a, c in counts.items() if c >= 3}
        assert rec["counts"] == sorted(rec["counts"], reverse=True)
        assert rec["n_valid"] == sum(counts.values())
        assert all(a in (rule_annotation(text, 0), rule_annotation(text, 1)) for a in rec["references"])

    # the folder is a dataset (README configs) that the metric reads directly
    card = (tmp_path / "refs" / "README.md").read_text("utf-8")
    assert "configs:" in card and "references.jsonl" in card
    lookup = load_references(tmp_path / "refs")
    preds = [rule_annotation(s, 0) for s in SENTENCES]
    usable = [p for p in preds if lookup[" ".join(p.replace("/", " ").split())]]
    result = score(usable, references_for(usable, lookup))
    assert 0.0 <= result["acceptance_rate"] <= 1.0 and len(result["accepted"]) == len(usable)

    # the key is never logged nor written, and not in the backend's repr
    assert SECRET not in caplog.text and SECRET not in repr(llm)
    for path in (tmp_path / "refs").rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text("utf-8")


def test_rerun_uses_the_cache_and_asks_only_missing(tmp_path, utterances, loopback):
    with FakeLLMServer(key=SECRET) as server:
        llm = OpenAIChatLLM("m", base_url=server.url, api_key_env="LMRE_TEST_KEY")
        info = build_references(utterances, POOL, tmp_path / "o", llm, n_iter=4, batch_size=5, concurrency=2)
        first = len(server.requests)
        assert first == info["asked"] == 8
        again = build_references(utterances, POOL, tmp_path / "o", llm, n_iter=4, batch_size=5)
        assert len(server.requests) == first and again["cached"] == 8 and again["asked"] == 0
        cache = sorted((tmp_path / "o" / "cache").glob("*.json"))
        for path in cache[:3]:
            path.unlink()
        third = build_references(utterances, POOL, tmp_path / "o", llm, n_iter=4, batch_size=5)
        assert len(server.requests) == first + 3 and third["asked"] == 3 and third["cached"] == 5
    assert _records(tmp_path / "o") == _records(tmp_path / "o")  # written and readable


def test_failures_raise_then_resume(tmp_path, utterances, loopback):
    with FakeLLMServer(key=SECRET, script=["good", "always_500"]) as server:
        llm = OpenAIChatLLM("m", base_url=server.url, api_key_env="LMRE_TEST_KEY")
        with pytest.raises(BuildError, match="4 of 8 requests failed after 2 retries"):
            build_references(utterances, POOL, tmp_path / "o", llm, n_iter=4, batch_size=5, max_retries=2,
                             backoff_base=0.01)
        assert len(server.requests) == 4 + 4 * 3  # good ones once, failing ones 1 + 2 retries
        assert not (tmp_path / "o" / "references.jsonl").exists()
        assert len(list((tmp_path / "o" / "cache").glob("*.json"))) == 4
        server.force["all"] = "good"
        info = build_references(utterances, POOL, tmp_path / "o", llm, n_iter=4, batch_size=5, max_retries=2)
        assert info["cached"] == 4 and info["asked"] == 4 and len(server.requests) == 16 + 4


def test_allow_failures_writes_with_a_warning(tmp_path, utterances, loopback):
    with FakeLLMServer(key=SECRET, script=["good", "always_500"]) as server:
        llm = OpenAIChatLLM("m", base_url=server.url, api_key_env="LMRE_TEST_KEY")
        with pytest.warns(UserWarning) as caught:
            info = build_references(utterances, POOL, tmp_path / "o", llm, n_iter=4, batch_size=5, max_retries=0,
                                    allow_failures=True)
    assert any("4 of 8 requests failed" in str(w.message) for w in caught)
    assert info["failed"] == 4
    records = _records(tmp_path / "o").values()
    assert sum(r["discarded"].get("failed_request", 0) for r in records) == 4 * 5  # 4 failed batches of 5
    assert all(r["n_valid"] + r["discarded"].get("failed_request", 0) == 4 for r in records)


def test_wrong_key_is_not_retried(tmp_path, utterances, loopback, monkeypatch):
    monkeypatch.setenv("LMRE_TEST_KEY", "sk-wrong")
    with FakeLLMServer(key=SECRET) as server:
        llm = OpenAIChatLLM("m", base_url=server.url, api_key_env="LMRE_TEST_KEY")
        with pytest.raises(BuildError):
            build_references(utterances, POOL, tmp_path / "o", llm, n_iter=2, batch_size=10, max_retries=4,
                             backoff_base=0.01)
        assert len(server.requests) == 2  # 401 is final


def test_missing_key_variable(monkeypatch):
    monkeypatch.delenv("LMRE_NO_SUCH_KEY", raising=False)
    with pytest.raises(ValueError, match="LMRE_NO_SUCH_KEY"):
        OpenAIChatLLM("m", base_url="http://127.0.0.1:9/v1", api_key_env="LMRE_NO_SUCH_KEY")


PASSWORD = "gateway-PASS-9876"


@pytest.mark.parametrize("credentials_in_url", [False, True], ids=["bearer-key", "url-userinfo"])
def test_secrets_are_never_written_nor_printed(tmp_path, utterances, loopback, caplog, capsys,
                                               credentials_in_url):
    """Issue 14: a server error that echoes the Authorization header, and credentials in --base-url, must
    not reach a log line, an exception message, a cache file, build_info.json, the card or stdout."""
    import base64
    import warnings

    from kometrics.cli import main
    from kometrics.datasets_scripts.phrase_break.builder import public_url, redact

    caplog.set_level(logging.DEBUG)
    basic = ("builder", PASSWORD) if credentials_in_url else None
    secrets = [SECRET, PASSWORD, base64.b64encode(f"builder:{PASSWORD}".encode()).decode()]
    (tmp_path / "u.txt").write_text("\n".join(SENTENCES[:6]) + "\n", "utf-8")
    (tmp_path / "pool.txt").write_text("\n".join(POOL) + "\n", "utf-8")
    shown: list[str] = []
    with FakeLLMServer(key=SECRET, script=["good", "echo_headers"], basic=basic) as server:
        url = server.url.replace("http://", f"http://builder:{PASSWORD}@") if credentials_in_url else server.url
        llm = OpenAIChatLLM("m", base_url=url, api_key_env="LMRE_TEST_KEY")
        shown += [repr(llm), llm.name, str(llm.base_url)]
        assert llm.base_url == server.url
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            info = build_references(SENTENCES[:6], POOL, tmp_path / "lib", llm, n_iter=3, batch_size=2,
                                    max_retries=1, backoff_base=0.001, backoff_max=0.002, allow_failures=True)
            with pytest.raises(BuildError) as failed:
                build_references(SENTENCES[:6], POOL, tmp_path / "strict", llm, n_iter=3, batch_size=2,
                                 max_retries=1, backoff_base=0.001, backoff_max=0.002)
            rc = main(["lmre", "build", "--utterances", str(tmp_path / "u.txt"), "--pool", str(tmp_path / "pool.txt"),
                       "--out", str(tmp_path / "cli"), "--llm", "openai", "--base-url", url, "--model", "m",
                       "--api-key-env", "LMRE_TEST_KEY", "--n-iter", "3", "--batch-size", "2", "--max-retries", "1",
                       "--allow-failures", "--verbose", "--quiet"])
        shown += [str(w.message) for w in caught] + [str(failed.value), json.dumps(info)]
        requests = list(server.requests)
    assert rc == 0
    # the server was sent the secrets and did echo them back in its errors
    assert all(r["auth_ok"] for r in requests)
    assert any(r["action"] == "echo_headers" for r in requests) and info["failed"] > 0 and info["asked"] > 0
    sent = PASSWORD if credentials_in_url else SECRET
    assert all(sent in base64.b64decode(r["authorization"][6:]).decode() if credentials_in_url
               else sent in r["authorization"] for r in requests)
    out = capsys.readouterr()
    shown += [caplog.text, out.out, out.err]
    written = {str(f.relative_to(tmp_path)): f.read_bytes().decode("utf-8", "replace")
               for f in tmp_path.rglob("*") if f.is_file()}
    assert any("cache" in name for name in written) and any(n.endswith("build_info.json") for n in written)
    for secret in secrets:
        for name, text in written.items():
            assert secret not in text, f"{secret!r} written to {name}"
        for text in shown:
            assert secret not in text, f"{secret!r} shown in {text[:300]!r}"
    assert "://builder" not in caplog.text and "@127.0.0.1" not in "".join(written.values())
    assert "failed: InternalServerError" in caplog.text and "***" in caplog.text  # logged, redacted
    assert json.loads(written["cli/build_info.json"])["llm"] == f"openai:{server.url}:m"
    # the helpers on their own
    assert public_url("http://u:p%40ss@host:8000/v1?x=1") == "http://host:8000/v1?x=1"
    assert public_url("https://api.example.com/v1") == "https://api.example.com/v1"
    assert redact('{"Authorization": "Bearer sk-abc", "api-key": "k1"} http://a:b@h/v1 Basic dXM6cHc=') == \
        '{"Authorization": "Bearer ***", "api-key": "***"} http://***@h/v1 Basic ***'


def _echo_llm(variant_of=lambda head: 0):
    """A plain callable answering every utterance with rule_annotation(text, variant_of(few-shot part))."""
    calls = []

    def llm(messages, temperature):
        calls.append(messages)
        head, _, tail = messages[-1]["content"].partition("Annotate these")
        out = []
        for line in tail.splitlines()[1:]:
            k, _, text = line.partition(". ")
            out.append(f"{k}. {rule_annotation(text, variant_of(head))}")
        return "\n".join(out)

    return llm, calls


def test_callable_min_count_and_seeded_few_shot(tmp_path, utterances):
    # variant 1 only when a given pool item is among the few-shot examples: counts depend on the sampling
    llm, calls = _echo_llm(lambda head: int(POOL[0] in head))
    info = build_references(utterances, POOL, tmp_path / "a", llm, n_iter=20, batch_size=32, few_shot_size=4, seed=1)
    assert info["config"]["min_count"] == 2 and len(calls) == 20
    with_first = sum(POOL[0] in m[-1]["content"] for m in calls)
    for rec in _records(tmp_path / "a").values():
        counts = dict(zip(rec["references"], rec["counts"]))
        text = rec["text"]
        expected = {rule_annotation(text, 0): 20 - with_first}
        expected[rule_annotation(text, 1)] = expected.get(rule_annotation(text, 1), 0) + with_first
        assert counts == {a: c for a, c in expected.items() if c >= 2}
    # same seed: the same prompts (all cached); another seed: other few-shot sets
    llm2, calls2 = _echo_llm()
    build_references(utterances, POOL, tmp_path / "a", llm2, n_iter=20, few_shot_size=4, seed=1)
    assert calls2 == []
    build_references(utterances, POOL, tmp_path / "b", llm2, n_iter=20, few_shot_size=4, seed=2)
    assert [m[-1]["content"] for m in calls2] != [m[-1]["content"] for m in calls]


def test_callable_retries_and_discards(tmp_path, utterances):
    state = Counter()

    def flaky(messages, temperature):
        state["calls"] += 1
        if state["calls"] <= 2:
            raise RetryableError("rate limited")
        if state["calls"] == 3:
            raise TimeoutError("slow")
        batch = messages[-1]["content"].partition("Annotate these")[2].splitlines()[1:]
        lines = []
        for line in batch:
            k, _, text = line.partition(". ")
            words = text.split()
            if k == "1":
                lines.append(f"{k}. {' '.join(reversed(words))}")  # other word order: never repaired
            else:
                lines.append(f"{k}. {words[0]} / {' '.join(words[1:])}")
        return "\n".join(lines)

    with pytest.warns(UserWarning, match="1 of 3 utterances kept no reference"):
        info = build_references(utterances[:3], POOL, tmp_path / "o", flaky, n_iter=1, max_retries=3,
                                backoff_base=0.001)
    assert info["retries"] == 3 and info["answers"]["words_mismatch"] == 1 and info["answers"]["valid"] == 2
    recs = list(_records(tmp_path / "o").values())
    assert recs[0]["references"] == [] and recs[0]["discarded"] == {"words_mismatch": 1}
    with pytest.warns(UserWarning, match="1 of 3 utterances kept no reference"):
        again = build_references(utterances[:3], POOL, tmp_path / "o", flaky, n_iter=1)  # from the cache
    assert again["cached"] == 1 and state["calls"] == 4

    def broken(messages, temperature):
        raise KeyError("a bug")

    with pytest.raises(BuildError, match="1 of 1 requests failed"):
        build_references(utterances[:3], POOL, tmp_path / "p", broken, n_iter=1, max_retries=5, backoff_base=0.001)


def test_ctrl_c_keeps_the_cache_and_resumes(tmp_path, utterances):
    # Ctrl-C as a user's terminal delivers it: Python's default handler, whatever an earlier test in this worker
    # process (a served app, a library) left installed.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _ctrl_c_then_resume(tmp_path, utterances)
    finally:
        signal.signal(signal.SIGINT, previous)


def _ctrl_c_then_resume(tmp_path, utterances):
    llm, calls = _echo_llm()
    lock = threading.Lock()

    def interrupting(messages, temperature):
        with lock:
            n = len(calls)
        if n == 3:
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does
        time.sleep(0.05)  # slow enough that the interrupt lands long before the last request
        return llm(messages, temperature)

    with pytest.raises(KeyboardInterrupt):
        build_references(utterances, POOL, tmp_path / "o", CallableLLM(interrupting, name="echo"), n_iter=10,
                         batch_size=5, concurrency=1)
        time.sleep(5)  # pragma: no cover - the interrupt arrives before this ends
    cache = tmp_path / "o" / "cache"
    files = list(cache.iterdir())
    assert all(f.suffix == ".json" for f in files), "no temporary files left behind"
    assert all(isinstance(json.loads(f.read_text("utf-8"))["response"], str) for f in files)
    done = len(files)
    assert 1 <= done < 20
    llm2, calls2 = _echo_llm()
    info = build_references(utterances, POOL, tmp_path / "o", CallableLLM(llm2, name="echo"), n_iter=10, batch_size=5)
    assert info["cached"] == done and len(calls2) == 20 - done


def test_identical_prompts_are_asked_once_and_counted_per_iteration(tmp_path, utterances):
    llm, calls = _echo_llm(lambda head: int(POOL[0] in head))
    info = build_references(utterances, POOL[:2], tmp_path / "o", llm, n_iter=10, few_shot_size=1, seed=0)
    assert info["distinct_prompts"] == len(calls) == 2 and info["requests"] == 10
    for rec in _records(tmp_path / "o").values():
        assert sum(rec["counts"]) == rec["n_valid"] == 10


def test_parse_response_rules():
    batch = [Utterance("a", ("가", "나")), Utterance("b", ("다", "라")), Utterance("c", ("마", "바")),
             Utterance("d", ("사", "아"))]
    text = "```\nSure:\n1. 가 / 나\n2) 다 // 라\n2. 다 라\n3: 마/ 바\n7. 자 차\n```"
    answers, dropped, stats = parse_response(text, batch)
    assert answers == {0: "가 / 나"}
    assert dropped == {1: "duplicate", 2: "malformed", 3: "missing"}
    assert stats == Counter({"valid": 1, "duplicate": 1, "malformed": 1, "missing": 1, "unnumbered": 1,
                             "out_of_range": 1})


def test_messages_and_input_files(tmp_path):
    (tmp_path / "u.jsonl").write_text('{"id": "x", "words": ["가", "나"]}\n{"id": "y", "text": "다 / 라"}\n', "utf-8")
    (tmp_path / "u.txt").write_text("가 나\n\n다 라\n", "utf-8")
    (tmp_path / "p.jsonl").write_text('{"annotation": "가  /  나 //"}\n', "utf-8")
    assert read_utterances(tmp_path / "u.jsonl") == [Utterance("x", ("가", "나")), Utterance("y", ("다", "라"))]
    assert [u.id for u in read_utterances(tmp_path / "u.txt")] == ["line-1", "line-3"]
    assert read_pool(tmp_path / "p.jsonl") == ["가 / 나"]
    (tmp_path / "bad.txt").write_text("가 / 나\n/ 다\n", "utf-8")
    with pytest.raises(ValueError, match="bad.txt:2"):
        read_pool(tmp_path / "bad.txt")
    msgs = build_messages([Utterance("x", ("가", "나"))], ["다 / 라"])
    assert msgs[0]["role"] == "system" and msgs[1]["content"].endswith("Annotate these 1 sentences:\n1. 가 나")


def test_cli_build_and_score(tmp_path, utterances, loopback, capsys):
    from kometrics.cli import main

    (tmp_path / "u.jsonl").write_text("".join(json.dumps({"id": u.id, "words": list(u.words)}, ensure_ascii=False)
                                              + "\n" for u in utterances), "utf-8")
    (tmp_path / "pool.txt").write_text("\n".join(POOL) + "\n", "utf-8")
    with FakeLLMServer(key=SECRET) as server:
        rc = main(["lmre", "build", "--utterances", str(tmp_path / "u.jsonl"), "--pool", str(tmp_path / "pool.txt"),
                   "--out", str(tmp_path / "refs"), "--llm", "openai", "--base-url", server.url, "--model", "m",
                   "--api-key-env", "LMRE_TEST_KEY", "--n-iter", "3", "--quiet"])
        assert rc == 0 and len(server.requests) == 3
    out = capsys.readouterr().out
    assert json.loads(out)["asked"] == 3 and SECRET not in out
    (tmp_path / "pred.txt").write_text("\n".join(SENTENCES) + "\n", "utf-8")
    rc = main(["lmre", "score", "--predictions", str(tmp_path / "pred.txt"), "--references-dir",
               str(tmp_path / "refs"), "--summary"])
    result = json.loads(capsys.readouterr().out)
    # no-boundary predictions are rejected by references that all have one boundary
    assert rc == 0 and result["acceptance_rate"] == 0.0


def test_concurrency_limit(tmp_path, utterances):
    llm, _ = _echo_llm()
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def slow(messages, temperature):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.1)
        with lock:
            state["now"] -= 1
        return llm(messages, temperature)

    info = build_references(utterances, POOL, tmp_path / "o", slow, n_iter=12, batch_size=2, concurrency=3)
    assert info["asked"] == info["distinct_prompts"] and state["max"] == 3


def test_cli_explain(capsys):
    from kometrics.cli import main

    rc = main(["lmre", "explain", "가 / 나 다", "--reference", "가 나 / 다", "--reference", "가 / 나 다",
               "--similarity", "em"])
    out = capsys.readouterr().out
    assert rc == 0 and out.startswith("accepted") and "#1 1.000  가 / 나 다" in out
    assert main(["lmre", "explain", "가 / 나 다", "--reference", "가 나 / 다"]) == 1
