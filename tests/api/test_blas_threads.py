"""The processes omoide starts run numpy's BLAS on ``OMOIDE_BLAS_THREADS`` threads (a search's
vector scan beside its own query embedding and keyword ranking); 0 leaves numpy's default."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from omoide.config import load_settings
from omoide.errors import InvalidInput
from omoide.serve.process import limit_blas_threads


def blas_threads() -> set[int]:
    return {int(lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"}


@pytest.fixture
def own_blas() -> Iterator[None]:
    """Whatever a test sets, the process's BLAS threads as they were afterwards."""
    np.ones((2, 2)) @ np.ones(2)  # numpy's BLAS loaded
    if not blas_threads():
        pytest.skip("numpy has no BLAS that threadpoolctl can set")
    with threadpool_limits(limits=None):
        yield


@pytest.mark.usefixtures("own_blas")
def test_the_setting_becomes_the_process_blas_threads() -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        limit_blas_threads(1)
        assert blas_threads() == {1}
        limit_blas_threads(3)
        assert blas_threads() == {3}


@pytest.mark.usefixtures("own_blas")
def test_zero_leaves_numpys_default() -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        limit_blas_threads(0)
        assert blas_threads() == {2}


def test_one_thread_unless_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMOIDE_BLAS_THREADS", raising=False)
    assert load_settings().server.blas_threads == 1
    monkeypatch.setenv("OMOIDE_BLAS_THREADS", "0")
    assert load_settings().server.blas_threads == 0
    monkeypatch.setenv("OMOIDE_BLAS_THREADS", "-1")
    with pytest.raises(InvalidInput, match="OMOIDE_BLAS_THREADS"):
        load_settings()
