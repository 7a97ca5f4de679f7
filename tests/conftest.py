"""Session-wide test settings: K-norm hulls are cached in a temporary directory, never in the user's cache."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_knorm_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    old = os.environ.get("SEMIDP_CACHE_DIR")
    os.environ["SEMIDP_CACHE_DIR"] = str(tmp_path_factory.mktemp("knorm-cache"))
    yield
    if old is None:
        os.environ.pop("SEMIDP_CACHE_DIR", None)
    else:
        os.environ["SEMIDP_CACHE_DIR"] = old
