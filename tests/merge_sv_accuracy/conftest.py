"""Fixtures of the MERGE tests: one Kiwi, torch on one thread (the CPUs are shared), a tiny MERGE set."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)  # many threads on 2 shared cores make a tiny forward 30x slower
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def kiwi():
    from kiwipiepy import Kiwi

    return Kiwi()


@pytest.fixture(scope="session")
def klue_seeds(data_dir):
    from kometrics.datasets_scripts.merge import read_seeds

    return read_seeds("klue", data_dir=data_dir, limit=24)


@pytest.fixture(scope="session")
def tiny_merge_dir(tmp_path_factory, tiny_bert, klue_seeds, kiwi):
    """A MERGE folder from 24 KLUE-NLI dev seeds and the tiny random MLM (floor 0: random weights give
    flat distributions)."""
    from kometrics.datasets_scripts.merge import MereOptions, MLMFillMask, build_dataset

    out = tmp_path_factory.mktemp("merge-tiny")
    stats = build_dataset(klue_seeds, MLMFillMask(tiny_bert), out, k=2, sample_seed=0, kiwi=kiwi,
                          options=MereOptions(top_k=30, probability_floor=0.0), lm_name="tiny_bert")
    return out, stats
