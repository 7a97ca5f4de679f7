"""Spec files as frozen dataclasses (contract: ``specs/README.md``); the dataclasses *are* the schema.

This module holds the sections every spec shares (``[data]``, ``[invariant]``,
``[query]``, ``[claim]``, ``[report]``, ``[audit]``, ``[design]``; a section plugin's table, such as
``[postprocess]``, is declared by its plugin and held in ``Spec.plugin_tables``) and :class:`MechanismSpec`,
the base of the per-kind ``[mechanism]`` dataclasses that each kind of
:mod:`verify.kinds` declares (house style R13, R16). :mod:`verify.load` turns
TOML into these values; :mod:`verify.schema` generates ``specs/schema.json``
from the same type hints.

Extensions to contract v1 (additive, no key renamed): guarantee values may be
exact rational strings (``zcdp = "293764/114921"``) as well as numbers.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, Literal, Optional, Self, Union

SPEC_VERSION = 1


def documented(text: str, **kw: Any) -> Any:
    """A dataclass field carrying its documentation (used by the loader's messages and the schema generator)."""
    return field(metadata={"doc": text}, **kw)


@dataclass(frozen=True)
class FeatureSpec:
    """One categorical feature of the data space."""

    name: str = documented("Feature name, unique.")
    levels: int = documented("Number of levels (>= 1).")


class Alternatives:
    """Base of the forms of a table written in exactly one of several forms told apart by the key each holds.

    A field typed as a union of such forms is a *keyed union* (the spec's "exactly one of" keys): each form is a
    frozen dataclass whose first own field (one no other form has) is its key; a form with no own field is the
    default. The loader (:mod:`verify.load`) picks the form whose key the table holds, reports a table holding
    several keys or none (:meth:`choice_problem`) and a key of another form, then builds the form with its own
    required keys; a built value is always exactly one form (validated once, where it is parsed).
    """

    CHOICE_KEY: ClassVar[str] = ""
    """The key, inside the table, that :meth:`choice_problem` is reported at (``""``: the table itself)."""

    @classmethod
    def choice_key(cls, given: Sequence[str]) -> str:
        """The key :meth:`choice_problem` is reported at (:attr:`CHOICE_KEY`)."""
        return cls.CHOICE_KEY

    @classmethod
    def choice_problem(cls, given: Sequence[str]) -> str:
        """The problem of a table holding the keys ``given`` of several forms, or none when there is no default."""
        return f"give exactly one of {[own_keys(f)[0] for f in form_types(cls)]}; got {list(given) or 'none'}"

    @classmethod
    def stray_problem(cls, key: str, owner: str) -> str:
        """The problem of ``key``, a later own key of the form whose first key ``owner`` the table lacks."""
        return f"{key} goes with {owner}"

    @classmethod
    def missing_problem(cls, owner: str) -> str:
        """The problem of a required key missing from the form picked by its first key ``owner``."""
        return "missing (required)"


def form_types(base: type) -> list[type]:
    """The forms of the keyed union based on ``base``: the ``FORMS`` it declares, else its dataclass subclasses
    in definition order."""
    declared: tuple[type, ...] = base.__dict__.get("FORMS", ())
    if declared:
        return list(declared)
    out: list[type] = []
    sub: type
    for sub in base.__subclasses__():
        out += [sub] if dataclasses.is_dataclass(sub) else []
        out += [t for t in form_types(sub) if t not in out]
    return out


def own_keys(form: type, forms: Sequence[type] = ()) -> list[str]:
    """The keys of ``form`` that no other of ``forms`` (default: the forms of its union's base) has."""
    others = [f for f in (forms or form_types(alternatives_base(form))) if f is not form]
    shared = {f.name for o in others for f in public_fields(o)}
    return [f.name for f in public_fields(form) if f.name not in shared]


def alternatives_base(form: type) -> type:
    """The class right below :class:`Alternatives` in ``form``'s bases: the base of its keyed union."""
    return next(c for c in reversed(form.__mro__) if c is not Alternatives and issubclass(c, Alternatives))


@dataclass(frozen=True)
class RecodeForm(Alternatives):
    """A recode of a feature (a function of its levels) that workload queries may name: ``map`` or ``bins``."""

    name: str = documented("Recode name, unique among features, recodes and geolevels.")
    of: str = documented("The feature it recodes.")

    @classmethod
    def choice_problem(cls, given: Sequence[str]) -> str:
        """``give exactly one of map ... or bins ...; got both`` (or ``neither``)."""
        got = "both" if given else "neither"
        return f"give exactly one of map (a new level per level) or bins (cut points); got {got}"


@dataclass(frozen=True)
class MapRecode(RecodeForm):
    """A recode by ``map``: one new level per level of the feature."""

    map: tuple[int, ...] = documented("One new level (>= 0) per level of the feature, in order; or give bins.")


@dataclass(frozen=True)
class BinsRecode(RecodeForm):
    """A recode by ``bins``: cut points on an ordinal feature."""

    bins: tuple[int, ...] = documented(
        "Cut points on an ordinal feature, strictly increasing, each in 1..levels-1: bins = [18, 65] makes the "
        "groups [0, 18), [18, 65), [65, levels); instead of map."
    )


RecodeSpec = Union[MapRecode, BinsRecode]
"""``data.recodes[i]``: ``{ name, of, map }`` or ``{ name, of, bins }`` (a keyed union, :class:`Alternatives`)."""


@dataclass(frozen=True)
class GeolevelSpec:
    """A geographic level with its number of units (the order of ``data.geography`` is checked by them)."""

    name: str = documented("Geolevel name, unique among features, recodes and geolevels.")
    units: int = documented("Number of units of the level (>= 1); the counts must not decrease from coarse to fine.")


@dataclass(frozen=True)
class DataSpec:
    """``[data]``: the finite data space and its neighbouring relation."""

    features: tuple[FeatureSpec, ...] = documented("The features; cells are their product, row-major.")
    adjacency: Literal["replace-one", "add-remove"] = documented(
        "replace-one: bounded, Hamming, fixed n; add-remove: unbounded. Default replace-one; required with "
        "mechanism.measurements.",
        default="replace-one",
    )
    records: Optional[int] = documented("Number of records n, where it matters.", default=None)
    table: Optional[tuple[int, ...]] = documented(
        "The confidential histogram, row-major over the feature product.", default=None
    )
    geography: Optional[tuple[Union[str, GeolevelSpec], ...]] = documented(
        "Nested geographic levels, coarse to fine (extension, for measurement workloads): names, or "
        "{ name, units } tables whose unit counts let the order be checked; a level's name in "
        "invariant.margins stands for its units' totals.",
        default=None,
    )
    recodes: Optional[tuple[RecodeSpec, ...]] = documented(
        "Recodes of features that measurement queries may name (extension): { name, of, map } or { name, of, bins }.",
        default=None,
    )


class UnionForm:
    """Mixin of the forms of a union: a key that another form holds reads as ``None`` on this one.

    A form holds its own keys only; ``UNION_KEYS`` lists every form's, so a reader may test ``inv.matrix is not
    None`` whatever the form (and a typo still raises :class:`AttributeError`).
    """

    UNION_KEYS: ClassVar[tuple[str, ...]] = ()

    def __getattr__(self, name: str) -> Any:
        """``None`` for a key of another form of the union (only called when the attribute is missing)."""
        if name in type(self).UNION_KEYS:
            return None
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


_MARGINS_DOC = "kind = margins: each entry a set of feature names."


@dataclass(frozen=True)
class InvariantForm(UnionForm):
    """``[invariant]``: what is published exactly (a tagged union on ``kind``; each kind has its own key)."""

    UNION_KEYS: ClassVar[tuple[str, ...]] = ("margins", "matrix", "sets")


@dataclass(frozen=True)
class NoneInvariant(InvariantForm):
    """``kind = "none"``: nothing is published exactly."""

    kind: Literal["none"] = documented("Invariant kind.")


@dataclass(frozen=True)
class TotalInvariant(InvariantForm):
    """``kind = "total"``: the number of records."""

    kind: Literal["total"] = documented("Invariant kind.")


@dataclass(frozen=True)
class MarginsInvariant(InvariantForm):
    """``kind = "margins"``: the counts of each margin."""

    kind: Literal["margins"] = documented("Invariant kind.")
    margins: tuple[tuple[str, ...], ...] = documented(_MARGINS_DOC)


@dataclass(frozen=True)
class LinearInvariant(InvariantForm):
    """``kind = "linear"``: integer linear statistics of the histogram."""

    kind: Literal["linear"] = documented("Invariant kind.")
    matrix: tuple[tuple[int, ...], ...] = documented(
        "kind = linear: integer rows over histogram cells (row-major); each row is divided by its gcd, then "
        "its absolute sum times the number of records must be at most 2**53."
    )


@dataclass(frozen=True)
class CountingInvariant(InvariantForm):
    """``kind = "counting"``: the sums of cell subsets."""

    kind: Literal["counting"] = documented("Invariant kind.")
    sets: tuple[tuple[int, ...], ...] = documented("kind = counting: cell-index subsets whose sums are fixed.")


InvariantSpec = Union[NoneInvariant, TotalInvariant, MarginsInvariant, LinearInvariant, CountingInvariant]
"""``[invariant]``: one form per ``kind``, each with its own key (``margins``, ``matrix``, ``sets``)."""


@dataclass(frozen=True)
class QueryForm(UnionForm):
    """``[query]``: what the mechanism answers (a tagged union on ``kind``)."""

    UNION_KEYS: ClassVar[tuple[str, ...]] = ("matrix", "margins")


@dataclass(frozen=True)
class HistogramQuery(QueryForm):
    """``kind = "histogram"``: every cell's count."""

    kind: Literal["histogram"] = documented("Query kind.")


@dataclass(frozen=True)
class LinearQuery(QueryForm):
    """``kind = "linear"``: rows of a matrix over the cells."""

    kind: Literal["linear"] = documented("Query kind.")
    matrix: tuple[tuple[Fraction, ...], ...] = documented(
        "kind = linear: integer rows over histogram cells (|entry| <= 2**31 - 1; numbers or exact 'p/q' strings, "
        "read exactly)."
    )


@dataclass(frozen=True)
class MarginsQuery(QueryForm):
    """``kind = "margins"``: the counts of each margin."""

    kind: Literal["margins"] = documented("Query kind.")
    margins: tuple[tuple[str, ...], ...] = documented("kind = margins: feature sets whose counts are answered.")


QuerySpec = Union[HistogramQuery, LinearQuery, MarginsQuery]
"""``[query]``: one form per ``kind`` (``matrix`` with ``linear``, ``margins`` with ``margins``)."""


@dataclass(frozen=True)
class RdpSpec:
    """A Rényi-DP point ``(alpha, epsilon)``."""

    alpha: Fraction = documented("Rényi order (> 1).")
    epsilon: Fraction = documented("Rényi divergence bound (>= 0).")


#: The keys of a guarantee table; a form that lacks one reads it as ``None`` (:class:`UnionForm`).
GUARANTEE_KEYS = ("epsilon", "delta", "mu", "zcdp", "rdp")


@dataclass(frozen=True)
class GuaranteeForm(UnionForm, Alternatives):
    """A guarantee in exactly one form: epsilon (+delta), mu, zcdp or rdp (a keyed union).

    Each form holds its own keys only; reading another form's key (``g.mu`` of an epsilon guarantee) gives
    ``None``, so a reader may test ``g.zcdp is not None`` whatever the form.
    """

    FORM: ClassVar[str] = ""
    UNION_KEYS: ClassVar[tuple[str, ...]] = GUARANTEE_KEYS

    def form(self) -> str:
        """Which form this is: ``epsilon``, ``mu``, ``zcdp`` or ``rdp``."""
        return self.FORM

    def with_numbers(self, f: Callable[[Fraction], Fraction]) -> Self:
        """This guarantee with ``f`` applied to each of its numbers (``rdp``'s pair is kept as it is)."""
        vals = {k: f(v) for k in GUARANTEE_KEYS if isinstance(v := self.__dict__.get(k), Fraction)}
        return dataclasses.replace(self, **vals)

    @classmethod
    def choice_problem(cls, given: Sequence[str]) -> str:
        """``a guarantee takes exactly one form: ...; got [...]`` (or ``none``)."""
        return (
            "a guarantee takes exactly one form: {epsilon [, delta]}, {mu}, {zcdp} or "
            f"{{rdp = {{alpha, epsilon}}}}; got {list(given) or 'none'}"
        )


@dataclass(frozen=True)
class EpsilonGuarantee(GuaranteeForm):
    """Pure or approximate DP: ``{ epsilon [, delta] }``."""

    FORM: ClassVar[str] = "epsilon"
    epsilon: Fraction = documented("Pure/approximate DP epsilon.")
    delta: Optional[Fraction] = documented("Approximate DP delta (with epsilon).", default=None)


@dataclass(frozen=True)
class MuGuarantee(GuaranteeForm):
    """Gaussian DP: ``{ mu }``."""

    FORM: ClassVar[str] = "mu"
    mu: Fraction = documented("Gaussian DP mu.")


@dataclass(frozen=True)
class ZcdpGuarantee(GuaranteeForm):
    """zCDP: ``{ zcdp }``."""

    FORM: ClassVar[str] = "zcdp"
    zcdp: Fraction = documented("zCDP rho (number or exact 'p/q' string).")


@dataclass(frozen=True)
class RdpGuarantee(GuaranteeForm):
    """Rényi DP at one order: ``{ rdp = { alpha, epsilon } }``."""

    FORM: ClassVar[str] = "rdp"
    rdp: RdpSpec = documented("Rényi DP at one order.")


GuaranteeSpec = Union[EpsilonGuarantee, MuGuarantee, ZcdpGuarantee, RdpGuarantee]
"""A guarantee table (``claim.guarantee``, ``design.target``, ``mechanism.guarantee``): exactly one form."""


@dataclass(frozen=True)
class MechanismSpec:
    """``[mechanism]``: the base of every kind's spec dataclass (a tagged union on ``kind``).

    Each registered kind (:mod:`verify.registry`) declares its own frozen
    dataclass, a subclass of this one that adds the kind's keys; the loader picks
    it from ``kind``. The TOML keys are those of contract v1.
    """

    kind: str = documented("Mechanism kind (see specs/README.md for the keys of each).")


@dataclass(frozen=True)
class ClaimSpec:
    """``[claim]``: the guarantee someone claims for the joint release."""

    framework: Literal["dp", "semi-dp", "subspace-dp", "integer-subspace-dp"] = documented(
        "Privacy framework of the claim."
    )
    guarantee: GuaranteeSpec = documented("The claimed guarantee.")


@dataclass(frozen=True)
class ReportSpec:
    """``[report]``: how to express guarantees."""

    deltas: tuple[Fraction, ...] = documented(
        "Deltas at which guarantees are expressed as (epsilon, delta).",
        default=(Fraction(1, 10**10),),
    )


@dataclass(frozen=True)
class AuditSpec:
    """``[audit]``: sampling-based checks."""

    samples: int = documented("Number of releases to draw.", default=1000)
    seed: int = documented("Seed of numpy.random.default_rng.", default=0)


@dataclass(frozen=True)
class DesignSpec:
    """``[design]`` (extension, workload specs and calibrated kinds): calibrate the noise to the announced guarantee."""

    target: GuaranteeSpec = documented(
        "The guarantee the design must meet, in any form a claim accepts (supported: {epsilon, delta > 0} "
        "through the certified PLD bracket, {zcdp} exactly)."
    )
    framework: Literal["dp", "semi-dp"] = documented(
        "semi-dp: the query-level worst pair under the invariant; dp: the advertised (replace-one) guarantee.",
        default="semi-dp",
    )
    vary: Literal["scale", "allocation"] = documented(
        "scale: one factor c on every measurement's rho (the allocation kept); allocation: each measurement's rho "
        "re-balanced to the least summed weighted variance, then one factor c.",
        default="scale",
    )


@dataclass(frozen=True)
class Spec:
    """A whole spec file (contract v1)."""

    version: int = documented("Spec format version (1).")
    name: str = documented("[a-z0-9-]+, used for output file names.")
    data: DataSpec = documented("The data space.")
    invariant: InvariantSpec = documented("What is published exactly.")
    mechanism: MechanismSpec = documented("The mechanism or published release.")
    title: str = documented("Human-readable title.", default="")
    references: tuple[str, ...] = documented("Sources of the spec's facts.", default=())
    query: Optional[QuerySpec] = documented("The query.", default=None)
    claim: Optional[ClaimSpec] = documented("The claim to check.", default=None)
    report: ReportSpec = documented("Report options.", default_factory=ReportSpec)
    audit: Optional[AuditSpec] = documented("Sampling-based checks.", default=None)
    design: Optional[DesignSpec] = documented(
        "Design the release's noise to meet a target guarantee (extension, workload specs and calibrated kinds).",
        default=None,
    )
    path: str = field(default="<string>", metadata={"internal": True})
    sha256: str = field(default="", metadata={"internal": True})
    plugin_tables: tuple[tuple[str, Any], ...] = field(default=(), metadata={"internal": True})
    """``(name, value)`` of the tables owned by registered section plugins (:class:`verify.registry.SectionPlugin`
    with a ``table``), as the loader built them."""

    def plugin_table(self, name: str) -> Any:
        """The table of the section plugin ``name`` as its dataclass, or ``None`` when the spec has none."""
        return next((v for k, v in self.plugin_tables if k == name), None)

    def with_plugin_table(self, name: str, value: Any) -> Spec:
        """This spec with the table of the section plugin ``name`` replaced by ``value`` (added if absent)."""
        rest = tuple((k, v) for k, v in self.plugin_tables if k != name)
        return dataclasses.replace(self, plugin_tables=(*rest, (name, value)))


def public_fields(cls: Any) -> list[dataclasses.Field[Any]]:
    """The fields of a spec dataclass that are TOML keys (not the loader's internal ``path``/``sha256``)."""
    return [f for f in dataclasses.fields(cls) if not f.metadata.get("internal")]


def strip_optional(tp: Any) -> tuple[Any, bool]:
    """``(T, True)`` for ``Optional[T]``, else ``(tp, False)``."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return tp, False


def cell_count(spec: Spec) -> int:
    """Cells of the data space: the product of the features' levels (at least 1 each)."""
    cells = 1
    for f in spec.data.features:
        cells *= max(f.levels, 1)
    return cells


__all__ = [
    "GUARANTEE_KEYS",
    "Alternatives",
    "CountingInvariant",
    "HistogramQuery",
    "InvariantForm",
    "LinearInvariant",
    "LinearQuery",
    "MarginsInvariant",
    "MarginsQuery",
    "NoneInvariant",
    "QueryForm",
    "TotalInvariant",
    "UnionForm",
    "AuditSpec",
    "BinsRecode",
    "EpsilonGuarantee",
    "GuaranteeForm",
    "MapRecode",
    "MuGuarantee",
    "RdpGuarantee",
    "RecodeForm",
    "ZcdpGuarantee",
    "alternatives_base",
    "form_types",
    "own_keys",
    "ClaimSpec",
    "DataSpec",
    "DesignSpec",
    "FeatureSpec",
    "GeolevelSpec",
    "GuaranteeSpec",
    "InvariantSpec",
    "MechanismSpec",
    "QuerySpec",
    "RdpSpec",
    "RecodeSpec",
    "ReportSpec",
    "SPEC_VERSION",
    "Spec",
    "cell_count",
    "documented",
    "public_fields",
    "strip_optional",
]
