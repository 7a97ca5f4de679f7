"""What the runner hands a kind (:class:`Context`) and what the kind hands back (:class:`KindResult`).

The runner (:mod:`verify.runner`) builds the context once per spec: the data
space, invariant and neighbouring relation as :mod:`accountant` values, the
deltas of ``[report]``, the claim's framework and the semi-adjacent parameter
a(t) at the spec's table. A kind's :meth:`~verify.registry.Kind.run` returns its
guarantees, its own checks, its report sections and its artefacts (drawn
releases, plots); the runner adds the shared checks (a(t), certified
conversions, the claim, the sensitivity section) and computes the verdict.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.semiadjacent import SemiAdjacentParameter
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidSpec
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Invariant
from semidp.accountant.guarantees.relations import BaseRelation
from semidp.accountant.releases.accounting import AuditEvidence
from semidp.accountant.releases.model import Release
from semidp.verify.report import Check, Section
from semidp.verify.run_options import DEFAULT_OPTIONS, RunOptions
from semidp.verify.spec import MechanismSpec, Spec

M = TypeVar("M", bound=MechanismSpec)
V = TypeVar("V")

#: Draws when the spec has no ``[audit]`` section.
DEFAULT_SAMPLES = 200
#: The least time a step is given when the budget is spent (it then stops at once with its bounds).
MIN_STEP_SECONDS = 0.05


@dataclass(frozen=True)
class Context:
    """The shared part of an audit, computed once by the runner."""

    spec: Spec
    space: DataSpace
    invariant: Invariant
    relation: BaseRelation
    deltas: list[float]
    framework: str
    """The claim's framework, or the kind's default when the spec has no claim."""
    a: SemiAdjacentParameter
    """The semi-adjacent parameter a(t) at ``data.table`` (worst case over t without one)."""
    time_limit: float
    """The whole spec's budget in seconds (``--time-limit``)."""
    seed: int | None
    """``--seed`` (``None``: the spec's ``[audit] seed``, else fresh entropy; see :meth:`draw_seed`)."""

    deadline: float = float("inf")
    """``time.monotonic()`` by which the whole spec must be done (``--time-limit`` from the start)."""
    options: RunOptions = DEFAULT_OPTIONS
    """The run's options (``--allow-code``, the Dask scheduler), as the caller set them."""

    def remaining(self) -> float:
        """Seconds left of the spec's budget (at least :data:`MIN_STEP_SECONDS`: a step always gets a try and
        then degrades to its proven bounds)."""
        return max(self.deadline - time.monotonic(), MIN_STEP_SECONDS)

    @property
    def budget(self) -> Budget:
        """What is left of the spec's budget (``--time-limit``) as a :class:`~semidp.accountant.core.budget.Budget`:
        :meth:`remaining` seconds from now (so at least :data:`MIN_STEP_SECONDS`)."""
        return Budget.of(self.remaining())

    def mechanism(self, spec_type: type[M]) -> M:
        """The ``[mechanism]`` table as the kind's own dataclass (the loader built it from ``kind``)."""
        m = self.spec.mechanism
        if not isinstance(m, spec_type):
            raise TypeError(f"mechanism.kind = {m.kind!r} was loaded as {type(m).__name__}, not {spec_type.__name__}")
        return m

    @property
    def table(self) -> list[int] | None:
        """``data.table`` as Python ints (row-major cells), if given."""
        return None if self.spec.data.table is None else [int(c) for c in self.spec.data.table]

    def required(self, value: V | None, key: str) -> V:
        """``value`` (a spec key the kind's validation requires, e.g. ``data.table``), or :class:`InvalidSpec`
        naming ``key``: a spec built in Python that skipped the loader is refused as invalid, never run without it."""
        if value is None:
            raise InvalidSpec(
                self.spec.path, [f"{key}: missing (required by mechanism.kind = {self.spec.mechanism.kind!r})"]
            )
        return value

    def draw_seed(self) -> int:
        """The seed of the draws: ``--seed``, else ``[audit] seed``, else fresh OS entropy (always reported)."""
        spec_seed = self.spec.audit.seed if self.spec.audit is not None else None
        used = self.seed if self.seed is not None else spec_seed
        if used is None:
            entropy = np.random.SeedSequence().entropy
            if not isinstance(entropy, int):  # pragma: no cover - SeedSequence() draws an int from the OS
                raise TypeError("SeedSequence entropy is not an int")
            used = entropy % 2**63
        return int(used)

    def draw_count(self) -> int:
        """``[audit] samples``, or :data:`DEFAULT_SAMPLES`."""
        return self.spec.audit.samples if self.spec.audit is not None else DEFAULT_SAMPLES


@dataclass(frozen=True)
class Plot:
    """A PNG the kind draws when ``--out`` is given: ``<name>.<suffix>.png``."""

    suffix: str
    title: str
    draw: Callable[[Path, str], Path]
    """``(path, title) -> path``: writes the PNG."""


@dataclass(frozen=True)
class KindResult:
    """A kind's part of the audit: the release it describes, its checks, typed sections and artefacts; the runner
    accounts the release and does the rest.

    The runner applies :func:`~semidp.accountant.releases.accounting.account` to the
    :class:`~semidp.accountant.releases.model.Release` (for a black box,
    :func:`~semidp.accountant.releases.accounting.statistical_audit` to ``audit``; for a measurement workload,
    :class:`~semidp.accountant.releases.measurements.MeasurementRelease`,
    :func:`~semidp.accountant.releases.accounting.pld_bracket` through :mod:`verify.workload_accounting`).
    No kind overrides the runner's summaries or its claim decision.
    """

    release: Release
    """What was published, as data (house style R3): the runner's interpreters turn it into guarantees."""
    audit: AuditEvidence | None = None
    """A black box's statistical audit (its decision and epsilon lower bounds), for the audit interpreter."""
    checks: tuple[Check, ...] = ()
    """The kind's own checks, reported after the a(t) check and before the certified conversions."""
    final_checks: tuple[Check, ...] = ()
    """Checks reported last (after the claim and the sensitivity section)."""
    sections: tuple[Section, ...] = ()
    """The kind's report sections (``mechanism``, ``samples``, ``test``...), in report order."""
    seed: int | None = None
    """The seed the kind used (reported)."""
    samples: NDArray[np.float64] | None = None
    """Drawn releases, ``(samples, cells)`` float64 row-major (``--out`` writes ``<name>.samples.npy``)."""
    plots: tuple[Plot, ...] = ()
    """Plots besides the shared privacy plot."""

    def __post_init__(self) -> None:
        if not isinstance(self.release, Release):
            raise TypeError(f"KindResult: give the release a kind describes, not {self.release!r}")
        if (self.audit is not None) != self.release.is_black_box:
            raise TypeError("KindResult: a black-box release comes with its statistical audit, and only it")


__all__ = ["Context", "DEFAULT_SAMPLES", "KindResult", "MIN_STEP_SECONDS", "Plot"]
