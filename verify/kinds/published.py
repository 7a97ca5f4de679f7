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

from dataclasses import dataclass
from typing import Literal, Optional

from semidp.accountant.core.outcome import Skipped
from semidp.accountant.releases.accounting import plain_dp
from semidp.accountant.releases.model import KnownGuarantee, Part, Release
from semidp.verify.context import Context, KindResult
from semidp.verify.design import with_design
from semidp.verify.registry import KindDefaults, KindInfo, Problem
from semidp.verify.report import Check, GuaranteeSummary
from semidp.verify.sections import PlainDpSection
from semidp.verify.spec import GuaranteeSpec, MechanismSpec, Spec, documented
from semidp.verify.spec_checks import guarantee_problems
from semidp.verify.spec_values import guarantee_of
from semidp.verify.workload_report import workload_result
from semidp.verify.workload_spec import MeasurementsKey, read_measurements
from semidp.verify.workload_spec import data_problems as workload_data_problems


@dataclass(frozen=True)
class PublishedSpec(MechanismSpec):
    """``[mechanism]`` of kind ``published``: exactly one of ``guarantee``, ``components`` or ``measurements``."""

    guarantee: Optional[GuaranteeSpec] = documented(
        "The advertised guarantee of the release on (D, A_1).", default=None
    )
    components: Optional[tuple[GuaranteeSpec, ...]] = documented(
        "Advertised guarantees of the released parts, composed (extension); instead of guarantee. Semi-DP is "
        "then reported both ways (Cho & Awan Prop. 21).",
        default=None,
    )
    measurements: Optional[MeasurementsKey] = documented(
        "The release's measurements (extension), instead of guarantee; needs data.geography and noise. A CSV "
        "file inside the spec's folder with columns geolevel, query and one of rho, sigma2 (Gaussian noise) or "
        "scale (Laplace noise), or a table { file, columns, where } naming the columns of the publisher's own "
        "file and the rows to keep.",
        default=None,
    )
    noise: Optional[Literal["discrete-gaussian", "gaussian", "discrete-laplace", "laplace"]] = documented(
        "The noise added to every cell of every measurement (with measurements).", default=None
    )


@dataclass(frozen=True)
class PublishedKind(KindDefaults):
    """The kind object of ``published`` (see the module docstring)."""

    info: KindInfo = KindInfo("published", PublishedSpec, reports_sensitivity=True)

    def default_framework(self, spec: Spec) -> str:
        """``dp`` when nothing is published exactly, else ``semi-dp``."""
        return "dp" if spec.invariant.kind == "none" else "semi-dp"

    def validate(self, spec: Spec) -> list[Problem]:
        """Exactly one of ``guarantee`` / ``components``, each a valid guarantee table."""
        m = spec.mechanism
        if not isinstance(m, PublishedSpec):
            return []
        probs: list[Problem] = []
        given = [k for k in ("guarantee", "components", "measurements") if getattr(m, k) is not None]
        if len(given) != 1:
            probs.append(
                Problem(
                    "mechanism.guarantee",
                    "kind = 'published' needs exactly one of guarantee (the "
                    "advertised guarantee), components (the guarantees of the released parts) or measurements "
                    f"(a workload file); got {given or 'none'}",
                )
            )
        probs += self._workload_problems(spec, m)
        probs += guarantee_problems(m.guarantee, "mechanism.guarantee")
        if m.components is not None and not m.components:
            probs.append(Problem("mechanism.components", "needs at least one guarantee"))
        for i, c in enumerate(m.components or ()):
            probs += guarantee_problems(c, f"mechanism.components[{i}]")
        return probs

    @staticmethod
    def _workload_problems(spec: Spec, m: PublishedSpec) -> list[Problem]:
        """``measurements`` with ``noise``, ``data.geography`` under replace-one, and the file's rows."""
        probs = workload_data_problems(spec)
        if m.measurements is None:
            if m.noise is not None:
                probs.append(Problem("mechanism.noise", "only allowed with mechanism.measurements"))
            return probs
        if m.noise is None:
            probs.append(Problem("mechanism.noise", "required with mechanism.measurements"))
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
        if m.noise is not None and spec.data.geography:
            probs += read_measurements(spec, m.measurements, m.noise)[1]
        return probs

    def run(self, ctx: Context) -> KindResult:
        """The release as data: one part known by its advertised guarantee, or the components composed (the
        runner accounts it: Semi-DP grouping [CA24, Prop. 15, 21], plain DP of the joint release)."""
        m = ctx.mechanism(PublishedSpec)
        if m.measurements is not None and m.noise is not None:
            ms, _ = read_measurements(ctx.spec, m.measurements, m.noise)  # validated by the loader: read once here
            return with_design(ctx, workload_result(ctx, m.measurements, m.noise, ms), ms, m.noise)
        if m.components is not None:  # the released parts, composed (advertised: their composition)
            parts = tuple(
                Part(KnownGuarantee(guarantee_of(c, ctx.relation)), label=f"component {i}")
                for i, c in enumerate(m.components)
            )
            release = Release(ctx.relation, ctx.invariant, parts)
        else:  # the loader requires one of guarantee, components or measurements
            g = guarantee_of(ctx.required(m.guarantee, "mechanism.guarantee"), ctx.relation)
            release = Release(ctx.relation, ctx.invariant, (Part(KnownGuarantee(g)),), advertised=g)
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

__all__ = ["KIND", "PublishedKind", "PublishedSpec"]
