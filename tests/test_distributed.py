"""Distributed privatisation with a common seed (GGY full version, App. E, Alg 4;
docs/reference/subspace-integer-postprocessing.md §2.7)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import ApproxDP
from semidp.accountant.guarantees.relations import AddRemove, Replace, Subspace
from semidp.mechanisms.correlated_gaussian import EllipsoidGaussian, SubspaceCorrelatedGaussian
from semidp.mechanisms.distributed import (
    ADDITIVE_MECHANISMS,
    AdditiveSubspaceMechanism,
    Agent,
    Share,
    assemble,
    centralized_release,
    check_partition,
    distributed_release,
)
from semidp.mechanisms.gaussian import GaussianMechanism
from semidp.mechanisms.subspace import (
    ExtendedGaussian,
    ExtendedLaplace,
    ProjectedGaussian,
    ProjectedLaplace,
)

F = NDArray[np.float64]

# Two-way 2x3 table flattened row-major, both margins invariant (rank 4, ker C of dimension 2).
C = np.array(
    [
        [1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
        [1.0, 0.0, 0.0, 1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0, 0.0, 0.0, 1.0],
    ]
)
X = np.array([120.0, 35.5, 7.0, 0.0, 1e6, 3.25])
BLOCKS = [[4, 0], [2], [5, 1, 3]]  # a scattered partition, indices in the agents' own order


def _mechanisms() -> list[AdditiveSubspaceMechanism]:
    return [
        ProjectedGaussian.calibrate(C, 0.5, 1e-6),
        ExtendedGaussian.calibrate(C, 0.5, 1e-6),
        ProjectedLaplace.calibrate(C, 0.5),
        ExtendedLaplace.calibrate(C, 0.5),
        EllipsoidGaussian.calibrate(C, 0.5, 1e-6),
        SubspaceCorrelatedGaussian.calibrate(C, 0.5, 1e-6),  # GGY Alg 3 (m = 2: k = 2, pieces (1, 1))
    ]


MECHS = _mechanisms()


def test_whitelist_is_the_six_subspace_mechanisms() -> None:
    assert len(ADDITIVE_MECHANISMS) == 6
    assert {t.__name__ for t in ADDITIVE_MECHANISMS} == {type(m).__name__ for m in MECHS}


@pytest.mark.parametrize("m", MECHS, ids=lambda m: type(m).__name__)
def test_each_mechanism_is_additive(m: AdditiveSubspaceMechanism) -> None:
    # M(x) = x + e with e drawn from the generator alone: M(x) == x + M(0) bitwise, for any x.
    for x in (X, -X, np.zeros(6), np.arange(6.0) * 1e-7):
        got = m.sample(x, rng=np.random.default_rng(77), size=3)
        e = m.sample(np.zeros(6), rng=np.random.default_rng(77), size=3)
        assert np.array_equal(got, x + e)


@pytest.mark.parametrize("m", MECHS, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("seed", [0, 2**40 + 17, np.random.SeedSequence(123456789)], ids=["0", "big", "seedseq"])
@pytest.mark.parametrize("size", [None, 4])
def test_assembled_release_equals_centralized_bitwise(
    m: AdditiveSubspaceMechanism, seed: int | np.random.SeedSequence, size: int | None
) -> None:
    shares = distributed_release(X, BLOCKS, m, seed=seed, size=size)
    y = assemble(shares)
    central = centralized_release(X, m, seed=seed, size=size)
    assert y.shape == central.shape == ((6,) if size is None else (size, 6))
    assert np.array_equal(y, central)  # 0 ulp: same float operations
    assert y.tobytes() == central.tobytes()
    assert np.max(np.abs(y @ C.T - X @ C.T)) <= 1e-9 * 1e6  # C y = C x
    assert not np.allclose(y, X)  # noise was added


def test_agents_run_independently_in_any_order() -> None:
    m = MECHS[-1]
    agents = [Agent(tuple(b), X[b]) for b in BLOCKS]
    a = assemble([ag.release(m, seed=5) for ag in agents])
    b = assemble([ag.release(m, seed=5) for ag in reversed(agents)])
    assert np.array_equal(a, b) and np.array_equal(a, centralized_release(X, m, seed=5))
    other = assemble([ag.release(m, seed=6) for ag in agents])
    assert not np.allclose(a, other)
    # one agent with a different seed breaks the invariant: the common seed is essential
    broken = assemble([agents[0].release(m, seed=6)] + [ag.release(m, seed=5) for ag in agents[1:]])
    assert np.max(np.abs(broken @ C.T - X @ C.T)) > 1e-3


def test_caveat_any_agent_can_unnoise_the_others() -> None:
    # Agent 0 knows the seed, regenerates e = M(0) and recovers agent 2's data from its public share.
    m = MECHS[0]
    shares = distributed_release(X, BLOCKS, m, seed=99)
    e = centralized_release(np.zeros(6), m, seed=99)
    idx = list(shares[2].indices)
    assert np.allclose(shares[2].values - e[idx], X[idx], rtol=0, atol=1e-9 * 1e6)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(perm=st.permutations(list(range(6))), cuts=st.sets(st.integers(1, 5), max_size=5), seed=st.integers(0, 2**63))
def test_any_partition_reproduces_the_centralized_release(perm: list[int], cuts: set[int], seed: int) -> None:
    bounds = [0, *sorted(cuts), 6]
    blocks = [perm[a:b] for a, b in itertools.pairwise(bounds)]
    for m in (MECHS[1], MECHS[3], MECHS[5]):
        y = assemble(distributed_release(X, blocks, m, seed=seed))
        assert np.array_equal(y, centralized_release(X, m, seed=seed))


def test_full_alg3_with_several_pieces_is_reproduced_bitwise() -> None:
    # C = 1^T on R^6: m = 5, k = 4, pieces of sizes (3, 1, 1); three agents, scattered blocks, 5 draws.
    c = np.ones((1, 6))
    m = SubspaceCorrelatedGaussian.calibrate(c, 0.5, 1e-6, method="khachiyan")
    assert [u.shape[1] for u, _ in m.pieces] == [3, 1, 1] and m.k == 4
    y = assemble(distributed_release(X, BLOCKS, m, seed=31337, size=5))
    central = centralized_release(X, m, seed=31337, size=5)
    assert y.tobytes() == central.tobytes()
    assert np.max(np.abs(y.sum(axis=1) - X.sum())) <= 1e-9 * 1e6
    assert m.privacy_map(Replace()) == ApproxDP(0.5, 1e-6, Subspace(Replace(), ((1.0,) * 6,)))


def test_guarantee_is_the_mechanisms() -> None:
    # Alg 4's release has the law of the centralised one, hence its privacy map (against outsiders).
    m = ProjectedLaplace.calibrate(np.ones((1, 4)), 0.5, relation=AddRemove())
    g = m.privacy_map(AddRemove())
    assert isinstance(g.relation, Subspace) and g.epsilon == 0.5


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("blocks", "match"),
    [
        ([[0, 1, 2], [2, 3, 4, 5]], r"index 2 is in blocks\[0\] and blocks\[1\]"),
        ([[0, 1], [3, 4, 5]], r"do not cover all 6 indices: missing 2"),
        ([[0, 1, 2], [3, 4, 5, 6]], r"blocks\[1\] contains index 6, outside 0\.\.5"),
        ([[0, 1, 2], [], [3, 4, 5]], r"blocks\[1\] is empty"),
        ([[0, 1, 2], [3, 4, 4, 5]], r"blocks\[1\] lists an index more than once"),
        ([[0, 1, 2.0], [3, 4, 5]], r"blocks\[0\] contains 2\.0"),
        ([[0, 1, -1], [2, 3, 4, 5]], r"outside 0\.\.5"),
        ([], r"blocks is empty"),
        ("012345", r"must be a sequence"),
    ],
)
def test_blocks_that_do_not_partition_are_refused(blocks: list[list[int]], match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        distributed_release(X, blocks, MECHS[0], seed=1)


def test_other_refusals() -> None:
    m = MECHS[0]
    with pytest.raises(InvalidArgument, match="numpy.random.Generator"):
        distributed_release(X, BLOCKS, m, seed=np.random.default_rng(1))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="seed="):
        distributed_release(X, BLOCKS, m, seed=-1)
    with pytest.raises(InvalidArgument, match="seed="):
        distributed_release(X, BLOCKS, m, seed=True)
    with pytest.raises(InvalidArgument, match="not one of the additive"):
        distributed_release(X, BLOCKS, GaussianMechanism(sigma=1.0, sensitivity=1.0), seed=1)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"x has shape \(5,\)"):
        distributed_release(X[:5], BLOCKS, m, seed=1)
    with pytest.raises(InvalidArgument, match="non-finite"):
        distributed_release(np.where(X > 100, np.nan, X), BLOCKS, m, seed=1)
    with pytest.raises(InvalidArgument, match=r"indices contains 7, outside 0\.\.5"):
        Agent((0, 7), np.ones(2)).release(m, seed=1)
    with pytest.raises(InvalidArgument, match=r"data has shape \(3,\)"):
        Agent((0, 1), np.ones(3))
    with pytest.raises(InvalidArgument, match="indices must be >= 0"):
        Agent((0, -1), np.ones(2))
    with pytest.raises(TypeError):
        distributed_release(X, BLOCKS, m, 1)  # type: ignore[call-arg]
    s = distributed_release(X, BLOCKS, m, seed=1)
    with pytest.raises(InvalidArgument, match="missing 1, 3"):  # BLOCKS[2] = [5, 1, 3] left out
        assemble([s[0], s[1]], n=6)
    with pytest.raises(InvalidArgument, match="missing 5"):
        assemble([s[0], s[1], Share((1, 3), s[2].values[1:])], n=6)
    with pytest.raises(InvalidArgument, match="missing 1, 3"):
        assemble([s[0], s[1], Share((5,), s[2].values[:1])])  # n inferred from the largest index
    assert np.array_equal(assemble(s, n=6), assemble(s))
    with pytest.raises(InvalidArgument, match="index 4 is in"):
        assemble([*s, s[0]])
    with pytest.raises(InvalidArgument, match="values has shape"):
        assemble([s[0], Share(s[1].indices, np.ones((2, 1))), s[2]])
    with pytest.raises(InvalidArgument, match="shares is empty"):
        assemble([])
    assert check_partition([[1], [0]], 2) == ((1,), (0,))
