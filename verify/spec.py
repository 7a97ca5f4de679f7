"""Spec files: TOML validated into frozen dataclasses (contract: ``shared/reference/spec-format.md``).

The dataclasses below *are* the schema (house style R13): :func:`load` walks
their type hints to convert and check every key, unknown keys are errors with
``difflib`` suggestions, and every problem is reported at once in one
:class:`~accountant.errors.InvalidSpec`. :mod:`verify.schema` generates
``specs/schema.json`` from the same hints.

Extensions to contract v1 (additive, no key renamed): guarantee values may be
exact rational strings (``zcdp = "293764/114921"``) as well as numbers.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import re
import tomllib
import types
import typing
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, Optional

from accountant.errors import InvalidSpec

SPEC_VERSION = 1


def _doc(text: str, **kw: Any) -> Any:
    """A dataclass field carrying its documentation (used by the schema generator)."""
    return field(metadata={"doc": text}, **kw)


@dataclass(frozen=True)
class FeatureSpec:
    """One categorical feature of the data space."""

    name: str = _doc("Feature name, unique.")
    levels: int = _doc("Number of levels (>= 1).")


@dataclass(frozen=True)
class DataSpec:
    """``[data]``: the finite data space and its neighbouring relation."""

    features: tuple[FeatureSpec, ...] = _doc("The features; cells are their product, row-major.")
    adjacency: Literal["replace-one", "add-remove"] = _doc(
        "replace-one: bounded, Hamming, fixed n; add-remove: unbounded.", default="replace-one"
    )
    records: Optional[int] = _doc("Number of records n, where it matters.", default=None)
    table: Optional[tuple[int, ...]] = _doc(
        "The confidential histogram, row-major over the feature product.", default=None
    )


@dataclass(frozen=True)
class InvariantSpec:
    """``[invariant]``: what is published exactly."""

    kind: Literal["none", "total", "margins", "linear", "counting"] = _doc("Invariant kind.")
    margins: Optional[tuple[tuple[str, ...], ...]] = _doc(
        "kind = margins: each entry a set of feature names.", default=None
    )
    matrix: Optional[tuple[tuple[int, ...], ...]] = _doc(
        "kind = linear: integer rows over histogram cells (row-major).", default=None
    )
    sets: Optional[tuple[tuple[int, ...], ...]] = _doc(
        "kind = counting: cell-index subsets whose sums are fixed.", default=None
    )


@dataclass(frozen=True)
class QuerySpec:
    """``[query]``: what the mechanism answers."""

    kind: Literal["histogram", "linear", "margins"] = _doc("Query kind.")
    matrix: Optional[tuple[tuple[float, ...], ...]] = _doc(
        "kind = linear: rows over histogram cells.", default=None
    )
    margins: Optional[tuple[tuple[str, ...], ...]] = _doc(
        "kind = margins: feature sets whose counts are answered.", default=None
    )


@dataclass(frozen=True)
class RdpSpec:
    """A Rényi-DP point ``(alpha, epsilon)``."""

    alpha: Fraction = _doc("Rényi order (> 1).")
    epsilon: Fraction = _doc("Rényi divergence bound (>= 0).")


@dataclass(frozen=True)
class GuaranteeSpec:
    """A guarantee in exactly one form: epsilon (+delta), mu, zcdp or rdp."""

    epsilon: Optional[Fraction] = _doc("Pure/approximate DP epsilon.", default=None)
    delta: Optional[Fraction] = _doc("Approximate DP delta (with epsilon).", default=None)
    mu: Optional[Fraction] = _doc("Gaussian DP mu.", default=None)
    zcdp: Optional[Fraction] = _doc("zCDP rho (number or exact 'p/q' string).", default=None)
    rdp: Optional[RdpSpec] = _doc("Rényi DP at one order.", default=None)

    def form(self) -> str:
        """Which form this is: ``epsilon``, ``mu``, ``zcdp`` or ``rdp``."""
        return next(k for k in ("epsilon", "mu", "zcdp", "rdp") if getattr(self, k) is not None)


@dataclass(frozen=True)
class NoiseSpec:
    """Noise of a private test: a canonical noise distribution."""

    cnd: Literal["tulap", "gaussian"] = _doc("Canonical noise distribution.")
    epsilon: Optional[Fraction] = _doc("Tulap epsilon.", default=None)
    delta: Optional[Fraction] = _doc("Tulap delta.", default=None)
    mu: Optional[Fraction] = _doc("Gaussian mu.", default=None)


@dataclass(frozen=True)
class SamplerSpec:
    """generalized-laplace / generalized-gaussian (extension): how the lattice noise is drawn."""

    method: Literal["auto", "exact", "mcmc"] = _doc(
        "auto: exact rejection from free coordinates when the target is separable (l1, Gaussian) and "
        "the invariant admits a unimodular split, else MCMC; exact / mcmc: force one.", default="auto")
    ratio: Optional[Fraction] = _doc("MCMC proposal ratio a of DG(a) (default: the sampler's rule).", default=None)
    tv: Fraction = _doc("MCMC: largest TV distance to the target accepted at the burn-in (delta'_TV, "
                        "charged to the guarantee).", default=Fraction(1, 20))
    pairs: int = _doc("MCMC: coupled chain pairs for the L-lag TV bound.", default=200)
    lag: int = _doc("MCMC: lag L of the coupling.", default=2000)
    time_limit: Fraction = _doc("Seconds for the coupling diagnostics and the sampling each.", default=Fraction(120))


MechanismKind = Literal[
    "published", "gaussian", "projected-gaussian", "laplace", "projected-laplace", "k-norm",
    "generalized-laplace", "generalized-gaussian", "umpu-odds-ratio",
]


@dataclass(frozen=True)
class MechanismSpec:
    """``[mechanism]``: an existing release (``published``) or one semidp builds."""

    kind: MechanismKind = _doc("Mechanism kind.")
    guarantee: Optional[GuaranteeSpec] = _doc(
        "kind = published: the advertised guarantee of the release on (D, A_1).", default=None
    )
    components: Optional[tuple[GuaranteeSpec, ...]] = _doc(
        "kind = published (extension): advertised guarantees of the released parts, composed; "
        "instead of guarantee. Semi-DP is then reported both ways (Cho & Awan Prop. 21).",
        default=None,
    )
    epsilon: Optional[Fraction] = _doc("Calibration target epsilon.", default=None)
    delta: Optional[Fraction] = _doc("Calibration target delta.", default=None)
    mu: Optional[Fraction] = _doc("Calibration target mu.", default=None)
    rho: Optional[Fraction] = _doc("Calibration target rho.", default=None)
    norm: Optional[Literal["l1", "l2"]] = _doc("generalized-laplace: norm in the exponent.", default=None)
    theta0: Optional[Fraction] = _doc("umpu-odds-ratio: null odds ratio.", default=None)
    alpha: Optional[Fraction] = _doc("umpu-odds-ratio: level.", default=None)
    noise: Optional[NoiseSpec] = _doc("umpu-odds-ratio: the noise.", default=None)
    sampler: Optional[SamplerSpec] = _doc("generalized-*: how the lattice noise is drawn (extension).",
                                          default=None)
    alternative: Optional[Literal["greater", "less", "two-sided"]] = _doc(
        "umpu-odds-ratio (extension): H1 theta > theta0 (greater, Thm. 37), < (less), or the "
        "documented two-sided variant.", default=None)
    released: Optional[Fraction] = _doc("umpu-odds-ratio: an already released Z.", default=None)


@dataclass(frozen=True)
class ClaimSpec:
    """``[claim]``: the guarantee someone claims for the joint release."""

    framework: Literal["dp", "semi-dp", "subspace-dp", "integer-subspace-dp"] = _doc(
        "Privacy framework of the claim."
    )
    guarantee: GuaranteeSpec = _doc("The claimed guarantee.")


@dataclass(frozen=True)
class ReportSpec:
    """``[report]``: how to express guarantees."""

    deltas: tuple[Fraction, ...] = _doc(
        "Deltas at which guarantees are expressed as (epsilon, delta).",
        default=(Fraction(1, 10**10),),
    )


@dataclass(frozen=True)
class AuditSpec:
    """``[audit]``: sampling-based checks."""

    samples: int = _doc("Number of releases to draw.", default=1000)
    seed: int = _doc("Seed of numpy.random.default_rng.", default=0)


@dataclass(frozen=True)
class Spec:
    """A whole spec file (contract v1)."""

    version: int = _doc("Spec format version (1).")
    name: str = _doc("[a-z0-9-]+, used for output file names.")
    data: DataSpec = _doc("The data space.")
    invariant: InvariantSpec = _doc("What is published exactly.")
    mechanism: MechanismSpec = _doc("The mechanism or published release.")
    title: str = _doc("Human-readable title.", default="")
    references: tuple[str, ...] = _doc("Sources of the spec's facts.", default=())
    query: Optional[QuerySpec] = _doc("The query.", default=None)
    claim: Optional[ClaimSpec] = _doc("The claim to check.", default=None)
    report: ReportSpec = _doc("Report options.", default_factory=ReportSpec)
    audit: Optional[AuditSpec] = _doc("Sampling-based checks.", default=None)
    path: str = field(default="<string>", metadata={"internal": True})
    sha256: str = field(default="", metadata={"internal": True})


# --------------------------------------------------------------------------- loading


class _Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, key: str, msg: str) -> None:
        self.items.append(f"{key}: {msg}" if key else msg)


def _strip_optional(tp: Any) -> tuple[Any, bool]:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return tp, False


def _convert(tp: Any, value: Any, key: str, probs: _Problems) -> Any:
    tp, _ = _strip_optional(tp)
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            probs.add(key, f"expected a table, got {type(value).__name__} {value!r}")
            return None
        return _build(tp, value, key, probs)
    if origin is Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            close = difflib.get_close_matches(str(value), [str(a) for a in allowed], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            probs.add(key, f"{value!r} is not one of {list(allowed)}{hint}")
            return None
        return value
    if origin is tuple:
        inner = typing.get_args(tp)[0]
        if not isinstance(value, list):
            probs.add(key, f"expected an array, got {type(value).__name__} {value!r}")
            return None
        out = [_convert(inner, v, f"{key}[{i}]", probs) for i, v in enumerate(value)]
        return tuple(out)
    if tp is Fraction:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            probs.add(key, f"expected a number or an exact 'p/q' string, got {value!r}")
            return None
        try:
            return Fraction(value) if not isinstance(value, str) else Fraction(value.strip())
        except (ValueError, ZeroDivisionError, OverflowError):
            probs.add(key, f"{value!r} is not a finite number or 'p/q' rational")
            return None
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            probs.add(key, f"expected an integer, got {value!r}")
            return None
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            probs.add(key, f"expected a number, got {value!r}")
            return None
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            probs.add(key, f"expected a string, got {value!r}")
            return None
        return value
    raise TypeError(f"unsupported spec field type {tp!r}")  # programming error, not bad input


def _public_fields(cls: Any) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if not f.metadata.get("internal")]


def _build(cls: Any, table: dict[str, Any], prefix: str, probs: _Problems) -> Any:
    hints = typing.get_type_hints(cls)
    fields = _public_fields(cls)
    names = [f.name for f in fields]
    for k in table:
        if k not in names:
            close = difflib.get_close_matches(k, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; expected one of {names}"
            probs.add(_join(prefix, k), f"unknown key{hint}")
    kwargs: dict[str, Any] = {}
    for f in fields:
        key = _join(prefix, f.name)
        if f.name in table:
            kwargs[f.name] = _convert(hints[f.name], table[f.name], key, probs)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            probs.add(key, "missing (required)")
    try:
        return cls(**kwargs)
    except TypeError:
        return None


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _check_guarantee(g: GuaranteeSpec | None, key: str, probs: _Problems) -> None:
    if g is None:
        return
    forms = [k for k in ("epsilon", "mu", "zcdp", "rdp") if getattr(g, k) is not None]
    if len(forms) != 1:
        probs.add(key, "a guarantee takes exactly one form: {epsilon [, delta]}, {mu}, {zcdp} or "
                  f"{{rdp = {{alpha, epsilon}}}}; got {forms or 'none'}")
    if g.delta is not None and g.epsilon is None:
        probs.add(f"{key}.delta", "delta goes with epsilon")
    for k in ("epsilon", "mu", "zcdp"):
        v = getattr(g, k)
        if v is not None and v < 0:
            probs.add(f"{key}.{k}", f"must be >= 0, got {float(v)!r}")
    if g.delta is not None and not (0 <= g.delta <= 1):
        probs.add(f"{key}.delta", f"must be in [0, 1], got {float(g.delta)!r}")
    if g.rdp is not None and (g.rdp.alpha is not None and g.rdp.alpha <= 1):
        probs.add(f"{key}.rdp.alpha", f"must be > 1, got {float(g.rdp.alpha)!r}")


def _check_top(spec: Spec, probs: _Problems) -> None:
    if spec.version != SPEC_VERSION:
        probs.add("version", f"must be {SPEC_VERSION}, got {spec.version!r}")
    if not re.fullmatch(r"[a-z0-9-]+", spec.name):
        probs.add("name", f"{spec.name!r} must match [a-z0-9-]+ (it names output files)")


def _cells(spec: Spec) -> int:
    cells = 1
    for f in spec.data.features:
        cells *= max(f.levels, 1)
    return cells


def _check_data(spec: Spec, probs: _Problems) -> None:
    d = spec.data
    names = [f.name for f in d.features]
    if not names:
        probs.add("data.features", "needs at least one feature")
    for i, f in enumerate(d.features):
        if f.levels < 1:
            probs.add(f"data.features[{i}].levels", f"must be >= 1, got {f.levels}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        probs.add("data.features", f"feature names must be unique; repeated {dup}")
    cells = _cells(spec)
    if d.records is not None and d.records < 0:
        probs.add("data.records", f"must be >= 0, got {d.records}")
    if d.table is not None:
        if len(d.table) != cells:
            probs.add("data.table", f"has {len(d.table)} counts; the feature product has {cells} cells")
        if any(c < 0 for c in d.table):
            probs.add("data.table", "counts must be >= 0")
        if d.records is not None and sum(d.table) != d.records:
            probs.add("data.records", f"is {d.records} but data.table sums to {sum(d.table)}")


def _check_invariant(spec: Spec, probs: _Problems) -> None:
    names = [f.name for f in spec.data.features]
    cells = _cells(spec)
    inv = spec.invariant
    if inv.kind is None:  # the kind itself failed to parse; its problem is listed
        return
    required = {"margins": "margins", "linear": "matrix", "counting": "sets"}
    for kind, k in required.items():
        if inv.kind == kind and getattr(inv, k) is None:
            probs.add(f"invariant.{k}", f"required when kind = {kind!r}")
        if inv.kind != kind and getattr(inv, k) is not None:
            probs.add(f"invariant.{k}", f"only allowed when kind = {kind!r} (kind is {inv.kind!r})")
    for m in inv.margins or ():
        for n in m:
            if n not in names:
                close = difflib.get_close_matches(n, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; features are {names}"
                probs.add("invariant.margins", f"unknown feature {n!r}{hint}")
    for r, row in enumerate(inv.matrix or ()):
        if len(row) != cells:
            probs.add(f"invariant.matrix[{r}]", f"has {len(row)} entries; expected {cells} (one per cell)")
    for r, s in enumerate(inv.sets or ()):
        bad = [c for c in s if not (0 <= c < cells)]
        if bad:
            probs.add(f"invariant.sets[{r}]", f"cell indices {bad} out of range 0..{cells - 1}")


#: Mechanism kinds semidp builds, calibrates and draws from at ``data.table`` (verify.mechanism_audit).
_BUILT_KINDS = ("gaussian", "projected-gaussian", "laplace", "projected-laplace", "k-norm")


def _check_rest(spec: Spec, probs: _Problems) -> None:
    m = spec.mechanism
    if m.kind == "published" and (m.guarantee is None) == (m.components is None):
        probs.add("mechanism.guarantee", "kind = 'published' needs exactly one of guarantee (the advertised "
                  "guarantee) or components (the guarantees of the released parts)")
    _check_guarantee(m.guarantee, "mechanism.guarantee", probs)
    if m.kind == "umpu-odds-ratio":
        if m.noise is None:
            probs.add("mechanism.noise", "required for umpu-odds-ratio: { cnd = 'tulap', epsilon = .. } "
                      "or { cnd = 'gaussian', mu = .. }")
        elif m.noise.cnd == "tulap" and m.noise.epsilon is None:
            probs.add("mechanism.noise.epsilon", "required when cnd = 'tulap'")
        elif m.noise.cnd == "gaussian" and m.noise.mu is None:
            probs.add("mechanism.noise.mu", "required when cnd = 'gaussian'")
        if spec.data.table is None and m.released is None:
            probs.add("data.table", "umpu-odds-ratio needs the 2x2 table (or mechanism.released with the "
                      "margins in data.table)")
        if [f.levels for f in spec.data.features] != [2, 2]:
            probs.add("data.features", "umpu-odds-ratio needs two features with 2 levels each (a 2x2 table)")
        if m.alpha is not None and not (0 < m.alpha < 1):
            probs.add("mechanism.alpha", f"must be in (0, 1), got {float(m.alpha)!r}")
        if m.theta0 is not None and not m.theta0 > 0:
            probs.add("mechanism.theta0", f"must be > 0, got {float(m.theta0)!r}")
    if m.kind in _BUILT_KINDS:
        if spec.data.table is None:
            probs.add("data.table", f"required for mechanism.kind = {m.kind!r}: the releases are drawn "
                      "at the confidential histogram")
        for k in ("epsilon", "mu"):
            v = getattr(m, k)
            if v is not None and not v > 0:
                probs.add(f"mechanism.{k}", f"must be > 0, got {float(v)!r}")
        if m.kind in ("gaussian", "projected-gaussian"):
            if (m.mu is None) == (m.epsilon is None):
                probs.add("mechanism.mu", f"{m.kind} needs exactly one calibration target: mu, "
                          "or epsilon with delta")
            elif m.epsilon is not None and not (m.delta is not None and 0 < m.delta < 1):
                probs.add("mechanism.delta", f"{m.kind} with epsilon needs 0 < delta < 1")
        elif m.epsilon is None or m.mu is not None or m.delta not in (None, 0):
            probs.add("mechanism.epsilon", f"{m.kind} needs epsilon (pure DP: no mu, no delta)")
    if m.kind in ("generalized-laplace", "generalized-gaussian"):
        if spec.data.table is None:
            probs.add("data.table", f"required for mechanism.kind = {m.kind!r}: the integer releases are "
                      "drawn at the confidential histogram")
        if m.kind == "generalized-laplace" and (m.epsilon is None or not m.epsilon > 0):
            probs.add("mechanism.epsilon", "generalized-laplace needs epsilon > 0 (per unit of mechanism.norm)")
        if m.kind == "generalized-gaussian":
            if m.rho is None or not m.rho > 0:
                probs.add("mechanism.rho", "generalized-gaussian needs rho > 0 (zCDP per unit l2 distance "
                          "between equivalent histograms; sigma = 1/sqrt(2 rho))")
            if m.norm not in (None, "l2"):
                probs.add("mechanism.norm", "generalized-gaussian uses the l2 norm")
        smp = m.sampler
        if smp is not None:
            if not 0 < smp.tv < 1:
                probs.add("mechanism.sampler.tv", f"must be in (0, 1), got {float(smp.tv)!r}")
            if smp.ratio is not None and not 0 < smp.ratio < 1:
                probs.add("mechanism.sampler.ratio", f"must be in (0, 1), got {float(smp.ratio)!r}")
            if smp.pairs < 2 or smp.lag < 1 or not smp.time_limit > 0:
                probs.add("mechanism.sampler", "needs pairs >= 2, lag >= 1 and time_limit > 0")
    elif m.sampler is not None:
        probs.add("mechanism.sampler", "only allowed for generalized-laplace / generalized-gaussian")
    if m.components is not None and not m.components:
        probs.add("mechanism.components", "needs at least one guarantee")
    for i, c in enumerate(m.components or ()):
        _check_guarantee(c, f"mechanism.components[{i}]", probs)
    if spec.claim is not None:
        _check_guarantee(spec.claim.guarantee, "claim.guarantee", probs)
    for i, dl in enumerate(spec.report.deltas):
        if not (0 < dl < 1):
            probs.add(f"report.deltas[{i}]", f"must be in (0, 1), got {float(dl)!r}")
    if spec.audit is not None and spec.audit.samples < 1:
        probs.add("audit.samples", f"must be >= 1, got {spec.audit.samples}")


def loads(text: str, path: str = "<string>") -> Spec:
    """Parse and validate spec text; raise :class:`InvalidSpec` listing every problem."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InvalidSpec(path, [f"not valid TOML: {e}"]) from None
    probs = _Problems()
    spec = _build(Spec, raw, "", probs)
    if spec is not None:
        for check in (_check_top, _check_data, _check_invariant, _check_rest):
            try:
                check(spec, probs)
            except (TypeError, AttributeError):
                pass  # a section that failed to parse: its problem is already listed
    if probs.items or spec is None:
        raise InvalidSpec(path, probs.items or ["could not be read"])
    digest = hashlib.sha256(text.encode()).hexdigest()
    out: Spec = dataclasses.replace(spec, path=path, sha256=digest)
    return out


def load(path: str | Path) -> Spec:
    """Read and validate a spec file (contract v1); raise :class:`InvalidSpec` on any problem.

    Examples
    --------
    >>> s = loads('''
    ... version = 1
    ... name = "toy"
    ... [data]
    ... features = [{ name = "state", levels = 3 }]
    ... [invariant]
    ... kind = "margins"
    ... margins = [["state"]]
    ... [mechanism]
    ... kind = "published"
    ... guarantee = { zcdp = 0.5 }
    ... ''')
    >>> s.mechanism.guarantee.zcdp
    Fraction(1, 2)
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise InvalidSpec(str(path), [f"cannot read the file: {e.strerror}"]) from None
    return loads(text, str(path))
