"""Fixtures of the paraphrase tests: corpora built from ../shared/data (never copied into the repo)."""

from __future__ import annotations

import warnings

import pytest


@pytest.fixture(scope="session")
def klue_corpus(data_dir):
    from kometrics.datasets_scripts.paraphrase.corpus import build_named

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_named("klue-sts", data_dir)


@pytest.fixture(scope="session")
def korsts_corpus(data_dir):
    from kometrics.datasets_scripts.paraphrase.corpus import build_named

    return build_named("korsts", data_dir)
