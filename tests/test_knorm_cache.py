"""On-disk cache of optimal K-norm balls conv(S) (Cho & Awan 2024, Alg. 2 / Thm. 31): accountant.geometry.knorm_cache.

What is checked: a hit returns the same arrays as a fresh build (hence identical
K-norm draws for the same seed); every kind of damaged or doctored file is refused
and rebuilt (never trusted, never a warning); each re-verification check fires on
the defect it is there for; honest balls of every shape pass re-verification (else
the cache would rebuild forever); keys, directories and statuses behave as documented.

Golden values: vol(conv S) = 47.25 (3x3, moves and 3-cycles) and 24.75 (3x3, moves
only, Prop. 32 as printed), the exact volumes 189/4 and 99/4 of tests/test_knorm_ball.py
(docs/reference/semi-dp.md T-S7: acceptance 21/64 and 11/64 of the 144-volume basis cube).
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from semidp.accountant.core.errors import InvalidArgument, VerificationError
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_cache import (
    CACHE_ENV,
    _from_arrays,
    _to_arrays,
    cache_key,
    cached_knorm_ball,
    default_cache_dir,
    verify_knorm_ball,
)
from semidp.accountant.geometry.table_symmetry import TableSymmetry
from semidp.accountant.guarantees.relations import Replace
from semidp.accountant.sensitivity.spaces import SensitivitySpace, table_space
from semidp.mechanisms.knorm import KNormMechanism, uniform_in_ball

Arrays = dict[str, NDArray[Any]]
FIELDS = (
    "basis",
    "vertices",
    "vertex_vectors",
    "facets",
    "fan_points",
    "fan",
    "fan_volumes",
    "fan_multiplicity",
    "fan_cdf",
)


def sym33() -> TableSymmetry:
    return TableSymmetry(3, 3)


def assert_same_ball(a: KNormBall, b: KNormBall) -> None:
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y), f
    assert a.volume == b.volume and a.method == b.method
    assert a.symmetry == b.symmetry and a.facet_orbit_sizes == b.facet_orbit_sizes


def edit_file(path: Path, edit: Callable[[Arrays], None]) -> None:
    """Rewrite a cache file with edited arrays (a well-formed zip: only the re-verification can object)."""
    with np.load(path, allow_pickle=False) as z:
        arr = {k: np.array(z[k]) for k in z.files}
    edit(arr)
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arr)  # type: ignore[arg-type]


def recompute_cdf(arr: Arrays) -> None:
    """Make fan_cdf and volume consistent with edited fan volumes / multiplicities (as KNormBall does)."""
    cdf = np.cumsum(arr["fan_volumes"] * arr["fan_multiplicity"])
    arr["fan_cdf"] = cdf / cdf[-1]
    arr["volume"] = np.array(cdf[-1])


def recompute_volumes(arr: Arrays) -> None:
    """Fan volumes |det| / s! from the (edited) fan points, then the CDF."""
    w = arr["fan_points"][np.sort(arr["fan"], axis=1)]
    arr["fan_volumes"] = np.abs(np.linalg.det(w)) / math.factorial(w.shape[1])
    recompute_cdf(arr)


# ---------------------------------------------------------------------------------------------
# hit / miss, equality, golden volumes, identical draws
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("r", "c", "paper_exact", "symmetric", "volume"),
    [
        (3, 3, False, False, 47.25),
        (3, 3, False, True, 47.25),
        (3, 3, True, False, 24.75),
        (3, 3, True, True, 24.75),
        (2, 3, False, False, None),
        (2, 3, False, True, None),
        (2, 2, False, False, 4.0),
    ],
)
def test_miss_then_hit_returns_the_same_ball(
    tmp_path: Path, r: int, c: int, paper_exact: bool, symmetric: bool, volume: float | None
) -> None:
    sp = table_space(r, c, paper_exact=paper_exact)
    sym = TableSymmetry(r, c) if symmetric else None
    fresh = KNormBall.from_space(sp, symmetry=sym)
    first, info1 = cached_knorm_ball(sp, symmetry=sym, cache_dir=tmp_path)
    second, info2 = cached_knorm_ball(sp, symmetry=sym, cache_dir=tmp_path)
    assert (info1.status, info2.status) == ("miss", "hit")
    assert info1.reason == "" and info2.reason == ""
    assert info1.build_seconds > 0 and info1.load_seconds == 0
    assert info2.build_seconds == 0 and info2.load_seconds > 0
    assert info1.path == info2.path == tmp_path / f"knorm-{info1.key}.npz" and info2.path.is_file()
    assert_same_ball(first, fresh)
    assert_same_ball(second, fresh)
    assert second.space is sp
    if volume is not None:  # golden: T-S7 (see module docstring)
        assert second.volume == pytest.approx(volume, rel=1e-12)
    assert [p.name for p in tmp_path.iterdir()] == [f"knorm-{info1.key}.npz"]  # no temporary files left


@pytest.mark.parametrize("symmetric", [False, True])
def test_cached_ball_samples_identically(tmp_path: Path, symmetric: bool) -> None:
    sp = table_space(3, 3)
    sym = sym33() if symmetric else None
    fresh = KNormBall.from_space(sp, symmetry=sym)
    cached_knorm_ball(sp, symmetry=sym, cache_dir=tmp_path)
    hit, info = cached_knorm_ball(sp, symmetry=sym, cache_dir=tmp_path)
    assert info.status == "hit"
    a = uniform_in_ball(fresh, rng=np.random.default_rng(2024), size=3000)
    b = uniform_in_ball(hit, rng=np.random.default_rng(2024), size=3000)
    assert np.array_equal(a, b) and bool(hit.contains(b).all())
    x = np.arange(9.0).reshape(3, 3)
    ya = KNormMechanism(fresh, epsilon=0.5).sample(x, rng=np.random.default_rng(7), size=500)
    yb = KNormMechanism(hit, epsilon=0.5).sample(x, rng=np.random.default_rng(7), size=500)
    assert np.array_equal(ya, yb)
    assert np.allclose(yb.sum(axis=1), x.sum(axis=0)) and np.allclose(yb.sum(axis=2), x.sum(axis=1))  # margins kept


def test_relation_is_the_callers(tmp_path: Path) -> None:
    sp = table_space(3, 3)
    cached_knorm_ball(sp, cache_dir=tmp_path)  # stored without a relation
    ball, info = cached_knorm_ball(sp, relation=Replace(), cache_dir=tmp_path)
    assert info.status == "hit" and ball.relation == Replace()
    assert KNormMechanism(ball, epsilon=1.0).privacy_map(Replace()).epsilon == 1.0


# ---------------------------------------------------------------------------------------------
# damaged and doctored files: refused, rebuilt, overwritten
# ---------------------------------------------------------------------------------------------


def stored(tmp_path: Path, sp: SensitivitySpace, sym: TableSymmetry | None) -> Path:
    _, info = cached_knorm_ball(sp, symmetry=sym, cache_dir=tmp_path)
    assert info.status == "miss" and info.path is not None
    return info.path


def assert_rebuilt(tmp_path: Path, sp: SensitivitySpace, sym: TableSymmetry | None, why: str) -> None:
    ball, info = cached_knorm_ball(sp, symmetry=sym, cache_dir=tmp_path)
    assert info.status == "rebuilt", info
    assert re.search(why, info.reason), info.reason
    assert info.load_seconds > 0 and info.build_seconds > 0
    assert_same_ball(ball, KNormBall.from_space(sp, symmetry=sym))
    again, info2 = cached_knorm_ball(sp, symmetry=sym, cache_dir=tmp_path)  # the file was overwritten
    assert info2.status == "hit"
    assert_same_ball(again, ball)


@pytest.mark.parametrize("symmetric", [False, True])
def test_truncated_file_is_rebuilt(tmp_path: Path, symmetric: bool) -> None:
    sp, sym = table_space(3, 3), (sym33() if symmetric else None)
    path = stored(tmp_path, sp, sym)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert_rebuilt(tmp_path, sp, sym, "refused")


def test_garbage_and_flipped_bytes_are_rebuilt(tmp_path: Path) -> None:
    sp = table_space(3, 3)
    path = stored(tmp_path, sp, None)
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF  # inside a compressed member: CRC / inflate error
    path.write_bytes(bytes(data))
    assert_rebuilt(tmp_path, sp, None, "refused")
    path.write_bytes(b"not a zip file")
    assert_rebuilt(tmp_path, sp, None, "pickled")  # not a zip: np.load refuses its pickle fallback


def test_pickled_object_array_is_refused_not_unpickled(tmp_path: Path) -> None:
    sp = table_space(3, 3)
    path = stored(tmp_path, sp, None)

    def add_object(arr: Arrays) -> None:
        arr["meta"] = np.array([{"key": "x"}], dtype=object)  # saved pickled; reading it would unpickle

    edit_file(path, add_object)
    assert_rebuilt(tmp_path, sp, None, "allow_pickle=False")


def _scale_facet(arr: Arrays) -> None:
    arr["facets"][0] *= 1.5  # an element of S now has gauge 1.5


def _fan_volume(arr: Arrays) -> None:
    arr["fan_volumes"][0] *= 1.01
    recompute_cdf(arr)


def _duplicate_simplex(arr: Arrays) -> None:
    arr["fan"][0] = arr["fan"][1]
    arr["fan_volumes"][0] = arr["fan_volumes"][1]
    recompute_cdf(arr)


def _drop_simplex(arr: Arrays) -> None:
    vol = arr["fan_volumes"]
    j = int(np.argmax(vol))
    keep = np.arange(len(vol)) != j
    for k in ("fan", "fan_volumes", "fan_multiplicity"):
        arr[k] = arr[k][keep]
    recompute_cdf(arr)


def _rotate_basis(arr: Arrays) -> None:
    s = arr["basis"].shape[1]
    rot, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((s, s)))
    arr["basis"] = arr["basis"] @ rot  # still an orthonormal basis of span(S), but not the stored one


def _other_space(arr: Arrays) -> None:
    arr["space"] = arr["space"][:-1]


def _wrong_key(arr: Arrays) -> None:
    arr["meta"] = np.frombuffer(bytes(arr["meta"]).replace(b'"key": "', b'"key": "0'), dtype=np.uint8)


def _wrong_multiplicity(arr: Arrays) -> None:
    arr["fan_multiplicity"][0] += 1
    recompute_cdf(arr)


def _move_centroid(arr: Arrays) -> None:
    m = len(arr["vertices"])
    c = arr["fan_points"][m]
    a = arr["facets"][np.argmax(arr["facets"] @ c)]  # the facet the centroid lies on
    step = np.random.default_rng(1).standard_normal(len(c))
    arr["fan_points"][m] = c + 0.05 * (step - (step @ a) / (a @ a) * a)  # stays on the facet hyperplane
    recompute_volumes(arr)


def _drop_ridge(arr: Arrays) -> None:
    """Remove every simplex over one ridge of the representative facet (and fix volumes, CDF)."""
    m = len(arr["vertices"])
    rows = np.sort(arr["fan"], axis=1)
    tight = arr["fan_points"] @ arr["facets"].T >= 1 - 1e-9
    on_base = np.all(tight[rows[:, :-1]], axis=1)  # facets through each simplex's base
    own = np.all(tight[rows], axis=1)
    other = np.argmax(on_base & ~own, axis=1)
    assert np.all(rows[:, -1] >= m)
    keep = other != other[0]
    for k in ("fan", "fan_volumes", "fan_multiplicity"):
        arr[k] = arr[k][keep]
    recompute_cdf(arr)


def _drop_orbit(arr: Arrays) -> None:
    """Remove a whole facet orbit, its centroid and every simplex touching it, keeping the rest consistent
    (facet list still invariant under the group, orbit sizes, multiplicities and CDF recomputed)."""
    m = len(arr["vertices"])
    rows = np.sort(arr["fan"], axis=1)
    tight = arr["fan_points"] @ arr["facets"].T >= 1 - 1e-9
    centroid = m + 1
    size = int(arr["fan_multiplicity"][rows[:, -1] == centroid][0])
    facet = int(np.argmax(tight[centroid]))
    ambient = arr["facets"] @ arr["basis"].T  # orbit: same multiset of |entries| (3x3 moves)
    orbit = [
        i
        for i in range(len(ambient))
        if np.allclose(np.sort(np.abs(ambient[i])), np.sort(np.abs(ambient[facet])), atol=1e-9)
    ]
    assert len(orbit) == size
    keep = (rows[:, -1] != centroid) & ~np.any(np.all(tight[rows[:, :-1]][:, :, orbit], axis=1), axis=1)
    arr["facets"] = np.delete(arr["facets"], orbit, axis=0)
    for k in ("fan", "fan_volumes", "fan_multiplicity"):
        arr[k] = arr[k][keep]
    arr["fan_points"] = np.delete(arr["fan_points"], centroid, axis=0)
    arr["fan"][arr["fan"] > centroid] -= 1
    meta = json.loads(bytes(arr["meta"]))
    meta["facet_orbit_sizes"].remove(size)
    arr["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    recompute_cdf(arr)


@pytest.mark.parametrize(
    ("edit", "symmetric", "why"),
    [
        (_scale_facet, False, "facet gauge > 1"),
        (_scale_facet, True, "facet gauge > 1"),
        (_fan_volume, False, "fan volumes differ"),
        (_fan_volume, True, "fan volumes differ"),
        (_duplicate_simplex, False, "simplices coincide"),
        (_drop_simplex, False, "unshared wall|carries no fan simplex"),
        (_drop_simplex, True, "unshared wall|ridge"),
        (_rotate_basis, False, r"vertices != Q\^T"),
        (_other_space, False, "space vectors differ"),
        (_wrong_key, False, "metadata"),
        (_wrong_multiplicity, True, "multiplicities"),
        (_move_centroid, True, "centroid"),
        (_drop_ridge, True, "ridge"),
        (_drop_orbit, True, "unshared wall"),
    ],
    ids=[
        "facet-gauge",
        "facet-gauge-sym",
        "fan-volume",
        "fan-volume-sym",
        "duplicate-simplex",
        "drop-simplex",
        "drop-simplex-sym",
        "rotated-basis",
        "other-space",
        "wrong-key",
        "multiplicity-sym",
        "centroid-sym",
        "ridge-sym",
        "orbit-sym",
    ],
)
def test_doctored_file_is_rebuilt(tmp_path: Path, edit: Callable[[Arrays], None], symmetric: bool, why: str) -> None:
    sp = table_space(3, 3, paper_exact=True)  # 30 facets, 2 orbits: several simplices per facet
    sym = sym33() if symmetric else None
    edit_file(stored(tmp_path, sp, sym), edit)
    assert_rebuilt(tmp_path, sp, sym, why)


@cache
def stored_arrays(kind: str) -> tuple[SensitivitySpace, TableSymmetry | None, str, Arrays]:
    sp = table_space(3, 3, paper_exact=(kind == "moves"))
    sym = sym33() if kind != "qhull" else None
    key = cache_key(sp, symmetry=sym)
    return sp, sym, key, _to_arrays(KNormBall.from_space(sp, symmetry=sym), key)


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(["qhull", "sym", "moves"]),
    name=st.sampled_from(["basis", "vertices", "facets", "fan_points", "fan_volumes", "fan_cdf", "volume"]),
    where=st.integers(min_value=0),
    delta=st.floats(1e-6, 1.0),
    negative=st.booleans(),
)
def test_any_single_float_change_is_refused(kind: str, name: str, where: int, delta: float, negative: bool) -> None:
    """Property: moving any one stored float by at least 1e-6 makes re-verification fail."""
    sp, sym, key, arrays = stored_arrays(kind)
    arr = {k: np.array(v) for k, v in arrays.items()}
    flat = arr[name].reshape(-1)
    flat[where % flat.size] += -delta if negative else delta
    with pytest.raises(VerificationError):
        verify_knorm_ball(_from_arrays(arr, sp, key, sym, None))


@pytest.mark.parametrize("kind", ["qhull", "sym", "moves"])
def test_unchanged_arrays_pass(kind: str) -> None:
    sp, sym, key, arrays = stored_arrays(kind)
    verify_knorm_ball(_from_arrays({k: np.array(v) for k, v in arrays.items()}, sp, key, sym, None))


@pytest.mark.parametrize(
    ("r", "c", "paper_exact"),
    [(2, 2, False), (2, 3, False), (2, 4, False), (3, 3, False), (3, 3, True), (3, 4, False), (3, 4, True)],
)
@pytest.mark.parametrize("symmetric", [False, True])
def test_fresh_builds_pass_reverification(r: int, c: int, paper_exact: bool, symmetric: bool) -> None:
    """No false alarms: otherwise a valid cache file would be rebuilt on every call."""
    verify_knorm_ball(
        KNormBall.from_space(
            table_space(r, c, paper_exact=paper_exact), symmetry=TableSymmetry(r, c) if symmetric else None
        )
    )


# ---------------------------------------------------------------------------------------------
# keys, directories, statuses
# ---------------------------------------------------------------------------------------------


def test_keys_separate_spaces_and_build_choices() -> None:
    k33 = cache_key(table_space(3, 3))
    keys = {
        k33,
        cache_key(table_space(3, 3, paper_exact=True)),
        cache_key(table_space(2, 3)),
        cache_key(table_space(3, 2)),
        cache_key(table_space(3, 3), symmetry=sym33()),
        cache_key(table_space(3, 3), symmetry=sym33(), expand_limit=10),
    }
    assert len(keys) == 6 and all(len(k) == 64 for k in keys)
    relabelled = SensitivitySpace.from_vectors(table_space(3, 3).vectors, "same vectors, other label")
    assert cache_key(relabelled) == k33  # the label does not change the ball
    assert cache_key(table_space(3, 3), expand_limit=10, time_limit=1.0, work_limit=5.0) == k33  # no effect


def test_different_spaces_get_different_files(tmp_path: Path) -> None:
    _, a = cached_knorm_ball(table_space(3, 3), cache_dir=tmp_path)
    _, b = cached_knorm_ball(table_space(2, 3), cache_dir=tmp_path)
    ball, c = cached_knorm_ball(table_space(3, 3, paper_exact=True), cache_dir=tmp_path)
    assert (a.status, b.status, c.status) == ("miss", "miss", "miss")
    assert len({a.path, b.path, c.path}) == 3 and len(list(tmp_path.iterdir())) == 3
    assert ball.volume == pytest.approx(24.75, rel=1e-12)


def test_a_file_under_another_key_is_refused(tmp_path: Path) -> None:
    _, a = cached_knorm_ball(table_space(3, 3, paper_exact=True), cache_dir=tmp_path)
    target = tmp_path / f"knorm-{cache_key(table_space(3, 3))}.npz"
    assert a.path is not None
    os.replace(a.path, target)  # the moves-only ball where the full S's should be
    ball, info = cached_knorm_ball(table_space(3, 3), cache_dir=tmp_path)
    assert info.status == "rebuilt" and "metadata" in info.reason
    assert ball.volume == pytest.approx(47.25, rel=1e-12)


def test_environment_variable_and_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "env"))
    assert default_cache_dir() == tmp_path / "env"
    _, info = cached_knorm_ball(table_space(2, 3))
    assert info.status == "miss" and info.path is not None and info.path.parent == tmp_path / "env"
    assert cached_knorm_ball(table_space(2, 3))[1].status == "hit"
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "semidp" / "knorm"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # not absolute: ignored (XDG spec)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "semidp" / "knorm"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "semidp" / "knorm"


def test_refresh_forces_a_rebuild(tmp_path: Path) -> None:
    sp = table_space(3, 3)
    ball, info = cached_knorm_ball(sp, cache_dir=tmp_path, refresh=True)
    assert info.status == "miss"  # nothing to refresh yet
    again, info2 = cached_knorm_ball(sp, cache_dir=tmp_path, refresh=True)
    assert info2.status == "rebuilt" and info2.reason == "refresh=True" and info2.load_seconds == 0
    assert_same_ball(again, ball)
    assert cached_knorm_ball(sp, cache_dir=tmp_path)[1].status == "hit"


def test_disabled_touches_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "never"))
    ball, info = cached_knorm_ball(table_space(3, 3), use_cache=False)
    assert info.status == "disabled" and info.path is None and info.load_seconds == 0
    assert not (tmp_path / "never").exists()
    assert_same_ball(ball, KNormBall.from_space(table_space(3, 3)))


def test_unknown_build_option_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="unknown build option"):
        cached_knorm_ball(table_space(3, 3), cache_dir=tmp_path, expand_limt=10)


def test_unverifiable_ball_is_returned_but_not_stored(tmp_path: Path) -> None:
    sp = table_space(3, 3, paper_exact=True)
    ball, info = cached_knorm_ball(sp, symmetry=sym33(), cache_dir=tmp_path, expand_limit=10)
    assert info.status == "miss" and "not stored" in info.reason and "not expanded" in info.reason
    assert len(ball.facets) == 2 and ball.facet_count == 30  # one normal per orbit
    assert list(tmp_path.iterdir()) == []


def test_failed_write_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(src: str, dst: str) -> None:
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(os, "replace", refuse)
    ball, info = cached_knorm_ball(table_space(3, 3), cache_dir=tmp_path)
    assert info.status == "miss" and "disk full" in info.reason
    assert list(tmp_path.iterdir()) == []  # the temporary file was removed
    assert ball.volume == pytest.approx(47.25, rel=1e-12)


def test_concurrent_rewrites_are_never_seen_half_written(tmp_path: Path) -> None:
    """A reader racing a writer that keeps replacing the file only ever sees complete files (os.replace)."""
    sp = table_space(3, 3)
    cached_knorm_ball(sp, cache_dir=tmp_path)
    statuses: list[str] = []
    done = threading.Event()

    def writer() -> None:
        for _ in range(40):
            cached_knorm_ball(sp, cache_dir=tmp_path, refresh=True)
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    while not done.is_set() or len(statuses) < 40:
        statuses.append(cached_knorm_ball(sp, cache_dir=tmp_path)[1].status)
    thread.join()
    assert set(statuses) == {"hit"}
    assert [p.name for p in tmp_path.iterdir()] == [f"knorm-{cache_key(sp)}.npz"]
