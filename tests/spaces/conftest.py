"""Browser fixtures for the Space tests: a Gradio app served on 127.0.0.1 and a headless Chromium page.

The browser is Debian's ``/usr/bin/chromium`` (``make browser`` installs it) driven by Playwright through
``executable_path``; Playwright never downloads a browser of its own. Tests that need it are marked
``@pytest.mark.browser`` and are skipped with a clear reason when no Chromium is installed (under ``CI=true``
they fail instead: see ``tests.conftest.missing``).
Screenshots go to pytest's tmp dir (``<basetemp>/screenshots*/``); their paths are printed.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from ..conftest import REPO, missing, require_module

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: Generous per-action timeout (ms): the first click of a model tab loads a model on a shared CPU.
ACTION_TIMEOUT_MS = 90_000


def chromium_path() -> str | None:
    """Debian's chromium (or ``$KOMETRICS_CHROMIUM``), or None when there is none."""
    for candidate in (os.environ.get("KOMETRICS_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_app(app_file: Path, module_name: str) -> ModuleType:
    """Import an ``app.py`` the way a Space runs it: its folder first on ``sys.path``, cwd = its folder."""
    folder = str(app_file.parent)
    sys.path.insert(0, folder)
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        spec = importlib.util.spec_from_file_location(module_name, app_file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    finally:
        os.chdir(cwd)
        if sys.path and sys.path[0] == folder:
            sys.path.pop(0)
    return module


@pytest.fixture
def serve() -> Iterator[Callable]:
    """``serve(demo) -> url``: launch a Gradio Blocks on a free local port; closed after the test."""
    launched = []

    def _serve(demo) -> str:
        demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True)
        launched.append(demo)
        return demo.local_url.rstrip("/")

    yield _serve
    for demo in launched:
        demo.close()


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium per test session (per xdist worker)."""
    exe = chromium_path()
    if exe is None:
        missing("Chromium for the browser tests: /usr/bin/chromium, `chromium` on PATH or $KOMETRICS_CHROMIUM "
                "(install Debian's chromium: `make browser`)")
    sync_playwright = require_module("playwright.sync_api", "pip install playwright").sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh page (1280x900) with generous timeouts; closed after the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    pg = context.new_page()
    pg.set_default_timeout(ACTION_TIMEOUT_MS)
    yield pg
    context.close()


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def screenshot(screenshot_dir) -> Callable:
    """``screenshot(page, name) -> Path``: a full-page PNG under pytest's tmp dir (path printed)."""

    def _shot(pg, name: str) -> Path:
        path = screenshot_dir / f"{name}.png"
        pg.screenshot(path=str(path), full_page=True)
        print(f"screenshot: {path}")
        return path

    return _shot


def open_app(pg, url: str) -> None:
    """Open a Gradio app and wait until its components are on the page."""
    pg.goto(url, wait_until="domcontentloaded")
    pg.wait_for_selector("gradio-app .gradio-container, .gradio-container", state="visible")
    # Gradio renders the blocks after fetching its config; wait for the first interactive element.
    pg.wait_for_selector("button", state="visible")


__all__ = ["REPO", "CHROMIUM_ARGS", "chromium_path", "free_port", "load_app", "open_app"]
