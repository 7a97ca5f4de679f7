"""``mechanism.kind = "published"``: an existing release audited through its advertised guarantee.

The advertised guarantee holds on :math:`(\\mathcal D, A_1)`; once the invariant
is published, the joint release satisfies the Semi-DP guarantee
:math:`f^{\\circ a(t)}` on :math:`(\\mathcal D_t, A_{a(t)})` [CA24, Prop. 15], and no
finite plain-DP guarantee unless the invariant is constant on adjacent pairs
(:func:`accountant.guarantees.semidp.joint_release_dp`). With ``components``, the released
parts are composed and Semi-DP is reported both ways [CA24, Prop. 21]. With ``measurements``
(a workload of histogram queries with their noise, :mod:`verify.workload_spec`), the kind describes a
measurement release (:func:`verify.workload_report.workload_release`) that the runner accounts measurement by
measurement (:mod:`verify.workload_accounting`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from semidp.accountant.core.outcome import Skipped
from semidp.accountant.releases.accounting import plain_dp
from semidp.accountant.releases.model import KnownGuarantee, Part, Release
from semidp.verify.context import Context, KindResult
from semidp.verify.design import with_design
from semidp.verify.registry import KindDefaults, KindInfo, Problem
from semidp.verify.report import Check, GuaranteeSummary
from semidp.verify.sections import PlainDpSection
from semidp.verify.spec import Alternatives, GuaranteeSpec, MechanismSpec, Spec, UnionForm, documented
from semidp.verify.spec_checks import guarantee_problems
from semidp.verify.spec_values import guarantee_of
from semidp.verify.workload_report import workload_result
from semidp.verify.workload_spec import MeasurementsKey, read_measurements
from semidp.verify.workload_spec import data_problems as workload_data_problems


@dataclass(frozen=True)
class PublishedSpec(MechanismSpec, UnionForm, Alternatives):
    """``[mechanism]`` of kind ``published``: exactly one of ``guarantee``, ``components`` or ``measurements``.

    A keyed union (:class:`~semidp.verify.spec.Alternatives`): the loader builds one of its forms,
    :class:`AdvertisedRelease`, :class:`ComponentsRelease` or :class:`MeasuredRelease`, from the key the table holds
    (validated once, where it is parsed); another form's key reads as ``None`` (:class:`~semidp.verify.spec.UnionForm`).
    """

    UNION_KEYS: ClassVar[tuple[str, ...]] = ("guarantee", "components", "measurements", "noise")
    CHOICE_KEY: ClassVar[str] = "guarantee"

    @classmethod
    def choice_problem(cls, given: Sequence[str]) -> str:
        """``kind = 'published' needs exactly one of guarantee (...), components (...) or measurements (...)``."""
        return (
            "kind = 'published' needs exactly one of guarantee (the "
            "advertised guarantee), components (the guarantees of the released parts) or measurements "
            f"(a workload file); got {list(given) or 'none'}"
        )

    @classmethod
    def stray_problem(cls, key: str, owner: str) -> str:
        """``only allowed with mechanism.measurements`` (``noise`` without ``measurements``)."""
        return f"only allowed with mechanism.{owner}"

    @classmethod
    def missing_problem(cls, owner: str) -> str:
        """``required with mechanism.measurements`` (``measurements`` without ``noise``)."""
        return f"required with mechanism.{owner}"


@dataclass(frozen=True)
class AdvertisedRelease(PublishedSpec):
    """A release known by its advertised guarantee: ``{ kind = "published", guarantee }``."""

    guarantee: GuaranteeSpec = documented("The advertised guarantee of the release on (D, A_1).")


@dataclass(frozen=True)
class ComponentsRelease(PublishedSpec):
    """A release of parts known by their advertised guarantees: ``{ kind = "published", components }``."""

    components: tuple[GuaranteeSpec, ...] = documented(
        "Advertised guarantees of the released parts, composed (extension); instead of guarantee. Semi-DP is "
        "then reported both ways (Cho & Awan Prop. 21)."
    )


@dataclass(frozen=True)
class MeasuredRelease(PublishedSpec):
    """A workload of noisy histogram queries: ``{ kind = "published", measurements, noise }``."""

    measurements: MeasurementsKey = documented(
        "The release's measurements (extension), instead of guarantee; needs data.geography and noise. A CSV "
        "file inside the spec's folder with columns geolevel, query and one of rho, sigma2 (Gaussian noise) or "
        "scale (Laplace noise), or a table { file, columns, where } naming the columns of the publisher's own "
        "file and the rows to keep."
    )
    noise: Literal["discrete-gaussian", "gaussian", "discrete-laplace", "laplace"] = documented(
        "The noise added to every cell of every measurement (with measurements)."
    )


@dataclass(frozen=True)
class PublishedKind(KindDefaults):
    """The kind object of ``published`` (see the module docstring)."""

    info: KindInfo = KindInfo("published", PublishedSpec, reports_sensitivity=True)

    def default_framework(self, spec: Spec) -> str:
        """``dp`` when nothing is published exactly, else ``semi-dp``."""
        return "dp" if spec.invariant.kind == "none" else "semi-dp"

    def validate(self, spec: Spec) -> list[Problem]:
        """Each guarantee valid, components not empty, and a workload's data, deltas, relation and invariant (which
        of guarantee / components / measurements is given, and ``noise`` with ``measurements``, is the loader's)."""
        m = spec.mechanism
        if isinstance(m, MeasuredRelease):
            return workload_data_problems(spec) + self._workload_problems(spec, m)
        probs = workload_data_problems(spec)
        if isinstance(m, AdvertisedRelease):
            probs += guarantee_problems(m.guarantee, "mechanism.guarantee")
        if isinstance(m, ComponentsRelease):
            if not m.components:
                probs.append(Problem("mechanism.components", "needs at least one guarantee"))
            for i, c in enumerate(m.components):
                probs += guarantee_problems(c, f"mechanism.components[{i}]")
        return probs

    @staticmethod
    def _workload_problems(spec: Spec, m: MeasuredRelease) -> list[Problem]:
        """``data.geography`` under replace-one, deltas to report at, and the file's rows (``m.noise`` is ``None``
        only in a spec rejected already: its problem is listed)."""
        probs: list[Problem] = []
        if not spec.data.geography:
            probs.append(Problem("data.geography", "required with mechanism.measurements (the measured levels)"))
        if not spec.report.deltas:
            probs.append(
                Problem(
                    "report.deltas",
                    "needs at least one delta with mechanism.measurements (the workload is reported at the first)",
                )
            )
        if spec.data.adjacency != "replace-one":
            probs.append(
                Problem("data.adjacency", "measurement workloads are accounted under replace-one only (rho per query)")
            )
        if spec.invariant.kind in ("linear", "counting"):
            probs.append(
                Problem(
                    "invariant.kind",
                    "with mechanism.measurements, use none, total or margins (of features and geolevels)",
                )
            )
        if m.noise is not None and m.measurements is not None and spec.data.geography:
            probs += read_measurements(spec, m.measurements, m.noise)[1]
        return probs

    def run(self, ctx: Context) -> KindResult:
        """The release as data: one part known by its advertised guarantee, or the components composed (the
        runner accounts it: Semi-DP grouping [CA24, Prop. 15, 21], plain DP of the joint release)."""
        m = ctx.mechanism(PublishedSpec)
        if isinstance(m, MeasuredRelease):
            ms, _ = read_measurements(ctx.spec, m.measurements, m.noise)  # validated by the loader: read once here
            return with_design(ctx, workload_result(ctx, m.measurements, m.noise, ms), ms, m.noise)
        if isinstance(m, ComponentsRelease):  # the released parts, composed (advertised: their composition)
            parts = tuple(
                Part(KnownGuarantee(guarantee_of(c, ctx.relation)), label=f"component {i}")
                for i, c in enumerate(m.components)
            )
            release = Release(ctx.relation, ctx.invariant, parts)
        elif isinstance(m, AdvertisedRelease):
            g = guarantee_of(m.guarantee, ctx.relation)
            release = Release(ctx.relation, ctx.invariant, (Part(KnownGuarantee(g)),), advertised=g)
        else:  # pragma: no cover - the loader builds one of the three forms
            raise TypeError(f"not a form of the published kind: {type(m).__name__}")
        return KindResult(
            release=release,
            seed=None,  # nothing is drawn: no randomness to report
            sections=(PlainDpSection(GuaranteeSummary.of(plain_dp(release, ctx.space), ctx.deltas)),),
            final_checks=(
                Check(
                    "invariant-preserved",
                    Skipped("a published release is audited through its advertised guarantee; no draws to check"),
                ),
            ),
        )


KIND = PublishedKind()

__all__ = ["KIND", "AdvertisedRelease", "ComponentsRelease", "MeasuredRelease", "PublishedKind", "PublishedSpec"]
