"""A small OpenAI-compatible chat-completions server on 127.0.0.1 for the builder tests.

It answers each request by a fixed rule (so the tests can recompute what the builder must count), and
follows a script for the k-th distinct prompt it sees: good answers, malformed answers, HTTP 429 / 500
first, slow first answers (client timeout), permanent 500, a 500 whose body echoes the request headers
(Authorization included, as some gateways do), or 401 for a wrong key. ``basic=(user, password)`` also
accepts HTTP basic auth (what the client sends for credentials in the base URL). Only loopback; the number
of requests it serves is bounded.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def rule_annotation(text: str, variant: int) -> str:
    """Variant 0: AP after the first word; variant 1: IP after the second word (if any)."""
    words = text.split()
    if variant == 0 or len(words) < 3:
        return " ".join([words[0], "/", *words[1:]]) if len(words) > 1 else words[0]
    return " ".join([*words[:2], "//", *words[2:]])


class FakeLLMServer:
    def __init__(self, key: str = "sk-test-secret", script=("good",), max_requests: int = 500,
                 slow_seconds: float = 1.0, basic: tuple[str, str] | None = None) -> None:
        self.key = key
        self.basic = None if basic is None else "Basic " + base64.b64encode(":".join(basic).encode()).decode()
        self.script = list(script)
        self.max_requests = max_requests
        self.slow_seconds = slow_seconds
        self.lock = threading.Lock()
        self.requests: list[dict] = []  # every request: prompt hash, attempt, action, auth ok, body
        self.prompt_order: dict[str, int] = {}
        self.attempts: Counter = Counter()
        self.served: dict[str, list[tuple[str, str | None]]] = {}  # prompt -> [(utterance, annotation|None)]
        self.force: dict[str, str] = {}  # action override for all prompts ("good" after an outage)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):  # noqa: N802 - http.server API
                server._handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeLLMServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- what the tests read back ---------------------------------------------------------------------
    def expected_counts(self) -> dict[str, Counter]:
        """Per utterance text: how many served answers gave each annotation (valid answers only)."""
        out: dict[str, Counter] = defaultdict(Counter)
        for answers in self.served.values():
            for text, ann in answers:
                if ann is not None:
                    out[text][ann] += 1
        return out

    # --- the handler ------------------------------------------------------------------------------------
    def _send(self, h: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length", 0))))
        prompt = json.dumps(body["messages"], ensure_ascii=False)
        digest = hashlib.sha256(prompt.encode()).hexdigest()
        with self.lock:
            if len(self.requests) >= self.max_requests:
                action = "refuse"
            else:
                order = self.prompt_order.setdefault(digest, len(self.prompt_order))
                attempt = self.attempts[digest]
                self.attempts[digest] += 1
                action = self.force.get("all") or self.script[order % len(self.script)]
            auth = h.headers.get("Authorization")
            auth_ok = auth == f"Bearer {self.key}" or (self.basic is not None and auth == self.basic)
            self.requests.append({"prompt": digest, "action": action, "auth_ok": auth_ok, "body": body,
                                  "path": h.path, "client": h.client_address[0], "authorization": auth})
        if action == "refuse":
            return self._send(h, 400, {"error": {"message": "request budget exhausted", "type": "invalid_request"}})
        if action == "echo_headers":  # a careless gateway: the error body repeats what it was sent
            headers = "; ".join(f"{k}: {v}" for k, v in h.headers.items())
            return self._send(h, 500, {"error": {"message": f"upstream failed for POST {h.path} with headers "
                                                 f"{headers}; raw: {dict(h.headers.items())}",
                                                 "type": "server_error"}})
        if not auth_ok:
            return self._send(h, 401, {"error": {"message": "bad key", "type": "invalid_api_key"}})
        if h.path != "/v1/chat/completions":
            return self._send(h, 404, {"error": {"message": "not found"}})
        if action == "429_first" and attempt == 0:
            return self._send(h, 429, {"error": {"message": "slow down", "type": "rate_limit"}}, {"Retry-After": "0"})
        if action == "500_first" and attempt == 0:
            return self._send(h, 500, {"error": {"message": "boom", "type": "server_error"}})
        if action == "always_500":
            return self._send(h, 503, {"error": {"message": "down", "type": "server_error"}})
        if action == "slow_first" and attempt == 0:
            time.sleep(self.slow_seconds)
        content = self._answer(body, digest, malformed=(action == "malformed"))
        self._send(h, 200, {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body["model"],
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": content}}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    def _answer(self, body: dict, digest: str, malformed: bool) -> str:
        user = body["messages"][-1]["content"]
        head, _, tail = user.partition("Annotate these")
        variant = int(hashlib.sha256(head.encode()).hexdigest(), 16) % 2  # depends on the few-shot set
        lines, served = [], []
        for line in tail.splitlines()[1:]:
            number, _, text = line.partition(". ")
            k = int(number)
            ann = rule_annotation(text, variant)
            if malformed and k == 1:
                lines.append(f"{k}. / {ann}")  # a boundary first: does not parse
                served.append((text, None))
            elif malformed and k == 2:
                lines.append(f"{k}. {ann} 덤")  # an extra word: words differ
                served.append((text, None))
            elif malformed and k == 3:
                served.append((text, None))  # missing
            else:
                lines.append(f"{k}. {ann}")
                served.append((text, ann))
        with self.lock:
            self.served[digest] = served
        return "Here you go:\n" + "\n".join(lines) if malformed else "\n".join(lines)
