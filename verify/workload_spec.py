"""Measurement workloads in specs: ``[data] geography`` / ``recodes`` and the measurements CSV of a published release.

A workload spec (contract: ``specs/README.md``, "Measurement workloads") names a CSV file of
measurements, one a line: ``geolevel,query`` and the noise of every cell, as ``rho`` (zCDP of the
histogram query under replace-one, so :math:`\\sigma^2=1/\\rho` [CKS20, Prop. 5]), ``sigma2``
(Gaussian kinds) or ``scale`` (Laplace kinds: ``b`` or ``t``), exact rationals accepted. A query is
``total``, ``detailed`` (every feature) or feature/recode names joined by `` * ``. An optional ``weight``
column (> 0, default 1) weighs the measurement's variance in an allocation design
(:mod:`accountant.workloads.allocation`); the accounting ignores it.

This module reads and checks the file (each problem names the file, line and column) and turns
it into :class:`~accountant.workloads.accounting.WorkloadMeasurement` values; it also gives the loader the
stand-in features for the geolevels an invariant names (:func:`with_geography_features`), and
checks ``data.geography`` (names, or ``{ name, units }`` whose counts must not decrease from coarse
to fine) and ``data.recodes`` (``map``, or ``bins``: cut points on an ordinal feature).

A measurement is *fixed* when its cells are unions of invariant cells (:class:`Fixing`). Whether a
level is coarser than the invariant's is read from the geography's order; with names only that order
is unchecked, so a measurement fixed only by it is refused (:func:`order_problems`): written fine to
coarse, the finest totals would count as fixed and the Semi-DP figure would be too low.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Optional, Union

from semidp.accountant.core.errors import MAX_LISTED_PROBLEMS
from semidp.accountant.workloads.accounting import GAUSSIAN_NOISES, WorkloadMeasurement
from semidp.verify.registry import Problem
from semidp.verify.spec import (
    Alternatives,
    FeatureSpec,
    GeolevelSpec,
    MapRecode,
    RecodeSpec,
    Spec,
    documented,
)
from semidp.verify.spec_files import SpecFileRefused, excerpt, read_text, spec_folder
from semidp.verify.spec_numbers import NumberRefused, exact_number

#: Levels of the stand-in feature of a geolevel named by the invariant: a(t) under a partition
#: invariant does not depend on the number of its parts once there are two.
GEOLEVEL_STANDIN_LEVELS = 2

KEY = "mechanism.measurements"
VALUE_COLUMNS = ("rho", "sigma2", "scale")
#: The optional column of weights (string form: by this name; table form: ``columns.weight``).
WEIGHT_COLUMN = "weight"
#: How many distinct value cells one read remembers (a published file repeats a few values; a hostile one
#: of a million distinct cells must not hold them all).
VALUE_CACHE = 10_000
#: Accepted range of a noise parameter (sigma^2, or the Laplace scale): its float must be normal and finite.
SCALE_RANGE = (1e-300, 1e300)
#: The largest rho of one Gaussian measurement (``rho``, or ``1/sigma2``): beyond about 1e13 the PLD arithmetic of
#: a workload overflows (an internal error, found by the hostile probe); 1e8 leaves room for the semi-DP factor
#: a(t)^2. Such a release protects no one (zCDP 1e8 is epsilon ~ 2e4 at delta 1e-10).
MAX_MEASUREMENT_RHO = 10**8
#: The smallest Laplace ``scale`` of one measurement (``b`` or ``t``): the same limit as the Gaussian rows'
#: (1/scale at most 1e8, as sigma2 >= 1e-8), epsilon = Delta_1/scale at most about 1e8 per unit of sensitivity.
#: Below about 1e-13 the Laplace PLD's tilt leaves the float range (an internal OverflowError, hostile probe).
MIN_LAPLACE_SCALE = Fraction(1, MAX_MEASUREMENT_RHO)


@dataclass(frozen=True)
class Measurement:
    """One row of the measurements file, resolved against the spec."""

    line: int
    """Line in the CSV (the header is line 1)."""
    geolevel: str
    query: str
    splits: frozenset[str]
    """The features whose levels the query's cells distinguish (directly, through a recode, or detailed)."""
    scale: Fraction
    """sigma^2 (Gaussian kinds) or the Laplace scale, exact."""
    rho: Fraction | None
    """The zCDP given in the file, if the file gave rho."""
    fixed: bool
    """Its cells are unions of invariant cells."""
    fixed_by: str = ""
    """Why it is fixed (empty when it is not): the invariant margin and how its level relates to the margin's."""
    fixed_by_order: str = ""
    """The margin's level it is fixed by only because it comes before that level in ``data.geography`` (coarser);
    empty otherwise."""
    weight: Fraction = Fraction(1)
    """The ``weight`` column (> 0, exact; 1 without the column): its variance's weight in an allocation design."""

    @property
    def label(self) -> str:
        """``"<geolevel>: <query>"``."""
        return f"{self.geolevel}: {self.query}"

    def accountant_value(self) -> WorkloadMeasurement:
        """As the accountant's value."""
        return WorkloadMeasurement(self.label, self.scale, self.fixed)


def geography_names(spec: Spec) -> tuple[str, ...]:
    """The names of ``data.geography``, coarse to fine (empty without it)."""
    return tuple(g if isinstance(g, str) else g.name for g in spec.data.geography or () if g is not None)


def geography_units(spec: Spec) -> tuple[int, ...] | None:
    """The unit counts of ``data.geography`` when every level gives one (``{ name, units }``), else ``None``."""
    levels = [g for g in spec.data.geography or () if g is not None]
    if not levels or any(isinstance(g, str) for g in levels):
        return None
    return tuple(g.units for g in levels if isinstance(g, GeolevelSpec))


def attribute_features(spec: Spec) -> list[FeatureSpec]:
    """The record attributes: ``data.features`` without the loader's geolevel stand-ins."""
    geo = set(geography_names(spec))
    return [f for f in spec.data.features or () if f is not None and f.name not in geo]


def with_geography_features(spec: Spec) -> Spec:
    """The spec with one stand-in feature per geolevel named in ``invariant.margins`` (for the data space and a(t)).

    A geolevel in a margin stands for its units' totals; the runner's data space needs it as a
    feature. Its level count is :data:`GEOLEVEL_STANDIN_LEVELS`: a(t) under a partition invariant
    is the same for any number (>= 2) of parts [CA24, Thm. 16].
    """
    geo = geography_names(spec)
    if not geo or spec.invariant is None or not spec.invariant.margins or spec.data.features is None:
        return spec
    names = {f.name for f in spec.data.features or () if f is not None}
    add = [
        FeatureSpec(n, GEOLEVEL_STANDIN_LEVELS)
        for n in geo
        if n not in names and any(m is not None and n in m for m in spec.invariant.margins)
    ]
    if not add:
        return spec
    data = dataclasses.replace(spec.data, features=(*spec.data.features, *add))
    return dataclasses.replace(spec, data=data)


def data_problems(spec: Spec) -> list[Problem]:
    """``data.geography`` and ``data.recodes``: unique names, recodes of existing features with valid maps."""
    probs: list[Problem] = []
    geo = geography_names(spec)
    feats = {f.name: f.levels for f in attribute_features(spec)}
    dup = sorted({g for g in geo if geo.count(g) > 1})
    if dup:
        probs.append(Problem("data.geography", f"geolevel names must be unique; repeated {dup}"))
    if geo and spec.invariant is not None:
        for margin in spec.invariant.margins or ():
            for n in margin or ():
                if n not in feats and n not in geo:
                    close = difflib.get_close_matches(str(n), [*geo, *feats], n=1)
                    hint = f"; did you mean {close[0]!r}?" if close else f"; geolevels are {list(geo)}"
                    probs.append(Problem("invariant.margins", f"{n!r} is neither a feature nor a geolevel{hint}"))
    probs += _units_problems(spec)
    seen: set[str] = set(feats) | set(geo)
    for i, r in enumerate(spec.data.recodes or ()):
        if r is None:
            continue  # a recode that failed to parse: its problem is already listed
        key = f"data.recodes[{i}]"
        if r.name in seen:
            probs.append(Problem(f"{key}.name", f"{r.name!r} is already a feature, recode or geolevel name"))
        seen.add(r.name)
        if r.of not in feats:
            probs.append(Problem(f"{key}.of", f"unknown feature {r.of!r}; features are {sorted(feats)}"))
        probs += _recode_problems(r, key, feats.get(r.of))
    return probs


def _units_problems(spec: Spec) -> list[Problem]:
    """``data.geography`` as ``{ name, units }``: every level or none gives units, >= 1, not decreasing to finer."""
    levels = [g for g in spec.data.geography or () if g is not None]
    tables = [(i, g) for i, g in enumerate(levels) if isinstance(g, GeolevelSpec)]
    if not tables:
        return []
    if len(tables) != len(levels):
        return [
            Problem(
                "data.geography",
                "give every level as { name, units } or every level as a name; the unit counts check the order",
            )
        ]
    probs = [Problem(f"data.geography[{i}].units", f"must be >= 1, got {g.units}") for i, g in tables if g.units < 1]
    for (_, prev), (i, g) in zip(tables, tables[1:]):
        if g.units < prev.units:
            probs.append(
                Problem(
                    f"data.geography[{i}].units",
                    f"{g.name!r} has {g.units} units, fewer than {prev.name!r} ({prev.units}) listed before it: "
                    "levels go coarse to fine (US, State, ..., Block), and a finer nested level has at least as "
                    "many units; reverse the list if it is written fine to coarse",
                )
            )
    return probs


def _recode_problems(r: RecodeSpec, key: str, levels: int | None) -> list[Problem]:
    """``map``: one level >= 0 per level of the feature; ``bins``: cut points in 1..levels-1, increasing (which of
    the two a recode gives, exactly one, is checked where it is parsed: a keyed union, :class:`~verify.spec.RecodeForm`)."""
    probs: list[Problem] = []
    if isinstance(r, MapRecode):
        if levels is not None and len(r.map) != levels:
            probs.append(Problem(f"{key}.map", f"has {len(r.map)} entries; feature {r.of!r} has {levels} levels"))
        if any(v is not None and v < 0 for v in r.map):
            probs.append(Problem(f"{key}.map", "levels must be >= 0"))
        return probs
    bins = r.bins
    if not bins:
        probs.append(Problem(f"{key}.bins", "needs at least one cut point"))
    for j, c in enumerate(bins):
        if c is None:
            continue
        if j and bins[j - 1] is not None and c <= bins[j - 1]:
            probs.append(Problem(f"{key}.bins[{j}]", f"{c} is not greater than the cut before it ({bins[j - 1]})"))
        if levels is not None and not 1 <= c <= levels - 1:
            probs.append(
                Problem(
                    f"{key}.bins[{j}]",
                    f"{c} is not a cut of feature {r.of!r} (levels 0..{levels - 1}): a cut c splits the levels "
                    f"below c from those at or above it, so 1 <= c <= {levels - 1}",
                )
            )
    return probs


def recode_map(r: RecodeSpec, levels: int) -> tuple[int, ...]:
    """The recode's new level of every level of its feature: ``map`` itself, or with ``bins`` the number of
    cut points at or below the level (``bins = [18, 65]``: levels 0-17 -> 0, 18-64 -> 1, 65.. -> 2)."""
    if isinstance(r, MapRecode):
        return r.map
    return tuple(sum(1 for c in r.bins if c <= level) for level in range(levels))


def omitted_key_problems(raw: object, spec: Spec) -> list[Problem]:
    """Keys a workload needs although the loader has a default: ``data.adjacency`` (``raw`` is the parsed TOML).

    The rho of a measurements file are under replace-one; elsewhere ``adjacency`` defaults to replace-one,
    but a workload must say it, so that a release accounted under add-remove is not read silently.
    """
    if getattr(spec.mechanism, "measurements", None) is None or not isinstance(raw, dict):
        return []
    data = raw.get("data")
    if isinstance(data, dict) and "adjacency" not in data:
        return [
            Problem(
                "data.adjacency",
                'required with mechanism.measurements: write adjacency = "replace-one" (the rho or sigma2 of the '
                "file are per query under replace-one, l2^2 sensitivity 2; add-remove workloads are not accounted)",
            )
        ]
    return []


def clash_problems(spec: Spec) -> list[Problem]:
    """Geolevel names that are also feature names (checked by the loader before it adds the stand-ins)."""
    declared = {f.name for f in spec.data.features or () if f is not None}
    clash = sorted(g for g in geography_names(spec) if g in declared)
    return [Problem("data.geography", f"{clash} are also feature names")] if clash else []


def _splits(spec: Spec, query: str) -> frozenset[str] | str:
    """The features a query splits, or the problem text."""
    feats = [f.name for f in attribute_features(spec)]
    recodes = {r.name: r.of for r in spec.data.recodes or ()}
    q = query.strip()
    if q == "total":
        return frozenset()
    if q == "detailed":
        return frozenset(feats)
    names = [n.strip() for n in q.split("*")]
    out: set[str] = set()
    for n in names:
        if n in feats:
            out.add(n)
        elif n in recodes:
            out.add(recodes[n])
        else:
            return f"unknown feature or recode {excerpt(n)} (known: total, detailed, {sorted([*feats, *recodes])})"
    return frozenset(out)


def _histogram_name(spec: Spec, query: str) -> str:
    """The query's histogram, named canonically: ``detailed`` is every feature, names sorted (duplicate check)."""
    q = query.strip()
    if q == "detailed":
        return " * ".join(sorted(f.name for f in attribute_features(spec)))
    return "" if q == "total" else " * ".join(sorted({n.strip() for n in q.split("*")}))


@dataclass(frozen=True)
class Fixing:
    """Why a measurement is fixed by the invariant: its cells are unions of the cells of ``margin``."""

    margin: tuple[str, ...]
    by_order: str
    """Empty when the measurement's level is one of the margin's (fixed whatever the order); else the
    margin's level it is coarser than, which only the geography's order says."""

    def reason(self, geolevel: str, units: tuple[int, ...] | None, geo: tuple[str, ...]) -> str:
        """One line: the margin, and the level relation that makes the measurement's cells unions of its cells."""
        margin = f"margin ({', '.join(self.margin)})"
        if not self.by_order:
            return f"level {geolevel} is in the {margin}"
        how = (
            f"{units[geo.index(geolevel)]} <= {units[geo.index(self.by_order)]} units" if units else "listed before it"
        )
        return f"level {geolevel} is coarser than {self.by_order} ({how}) of the {margin}"


def _fixing(spec: Spec, geolevel: str, splits: frozenset[str]) -> Fixing | None:
    """Which invariant margin makes every cell of the measurement a union of its cells (shift 0), if any.

    The measurement's cells are unions of a margin's cells when the query splits only the margin's
    features and its level is one of the margin's geolevels (any order) or coarser than one of them
    (by the order of ``data.geography``, checked only when it gives unit counts). A level-free
    margin spans every unit: conservative, not fixed.
    """
    inv = spec.invariant
    geo = geography_names(spec)
    if inv.kind != "margins" or not inv.margins:
        return None
    found: Fixing | None = None
    for margin in inv.margins:
        if margin is None or not splits <= set(margin):
            continue
        levels = [n for n in margin if n in geo]
        if geolevel in levels:
            return Fixing(tuple(margin), "")
        finer = [n for n in levels if geo.index(geolevel) < geo.index(n)]
        if finer and found is None:
            found = Fixing(tuple(margin), finer[0])
    return found


def order_problems(spec: Spec, ms: list[Measurement]) -> list[Problem]:
    """Measurements fixed only because of the order of a names-only ``data.geography``: refused.

    Written fine to coarse (the order of the Bureau's files), the order would make fine measurements
    "coarser" than the invariant's level and lower the Semi-DP figure; unit counts make the order checkable.
    """
    if geography_units(spec) is not None:
        return []
    by_order = [m for m in ms if m.fixed_by_order]
    if not by_order:
        return []
    shown = ", ".join(f"{m.label} (line {m.line})" for m in by_order[:4]) + (", ..." if len(by_order) > 4 else "")
    geo = geography_names(spec)
    example = ", ".join(f'{{ name = "{n}", units = ... }}' for n in geo[:2])
    level = by_order[0].fixed_by_order
    return [
        Problem(
            "data.geography",
            f"{shown} would count as fixed by the invariant only because their level is listed before {level!r} "
            f"(a level of invariant.margins); a list of names does not show which end is coarse (written fine to coarse, the finest "
            f"totals would count as fixed and the Semi-DP figure would be too low). Give each level's number of "
            f"units, coarse to fine, so the order is checked: geography = [{example}, ...]",
        )
    ]


def _parse_value(text: str, column: str, noise: str) -> tuple[Fraction, Fraction | None] | str:
    """``(scale, rho)`` from a value cell, or the problem text (the cell shown as a short escaped excerpt)."""
    try:
        v = exact_number(text)  # length and exponent checked before any arithmetic
    except NumberRefused as e:
        if e.syntax:
            return f"{excerpt(text)} is not a number or an exact 'p/q' rational"
        return str(e)  # shows at most a short escaped excerpt
    if v <= 0:
        return f"must be > 0, got {excerpt(text)}"
    fv = float(v)  # within [1e-300, 1e300] (exact_number): a float compare is enough and fast
    if not SCALE_RANGE[0] <= (1 / fv if column == "rho" else fv) <= SCALE_RANGE[1]:
        noun = "sigma^2 = 1/rho" if column == "rho" else column
        return f"{excerpt(text)} is out of range: {noun} must lie in [{SCALE_RANGE[0]:g}, {SCALE_RANGE[1]:g}]"
    if column in ("rho", "sigma2") and (fv if column == "rho" else 1 / fv) > MAX_MEASUREMENT_RHO:
        noun = "rho" if column == "rho" else "rho = 1/sigma2"
        return (
            f"{excerpt(text)} is out of range: {noun} must be at most {MAX_MEASUREMENT_RHO:g} "
            "(beyond it the privacy-loss arithmetic leaves the float range)"
        )
    if column == "scale" and v < MIN_LAPLACE_SCALE:
        return (
            f"{excerpt(text)} is out of range: scale must be at least {float(MIN_LAPLACE_SCALE):g} "
            "(epsilon = Delta/scale; beyond it the privacy-loss arithmetic leaves the float range)"
        )
    if column == "rho":
        if noise not in GAUSSIAN_NOISES:
            return f"a rho column needs Gaussian noise; with noise = {noise!r} give the scale (column 'scale')"
        return 1 / v, v
    if column == "sigma2" and noise not in GAUSSIAN_NOISES:
        return f"sigma2 is the variance of Gaussian noise; with noise = {noise!r} give 'scale'"
    if column == "scale" and noise in GAUSSIAN_NOISES:
        return f"scale is the Laplace scale; with noise = {noise!r} give 'rho' or 'sigma2'"
    return v, None


def _parse_weight(text: str) -> Fraction | str:
    """A weight cell: a number or exact rational > 0 (within the range of :data:`SCALE_RANGE`), or the problem."""
    try:
        v = exact_number(text)
    except NumberRefused as e:
        if e.syntax:
            return f"{excerpt(text)} is not a number or an exact 'p/q' rational (a weight > 0; default 1)"
        return str(e)
    if v <= 0:
        return f"a weight must be > 0, got {excerpt(text)}"
    if not SCALE_RANGE[0] <= float(v) <= SCALE_RANGE[1]:
        return f"{excerpt(text)} is out of range: a weight must lie in [{SCALE_RANGE[0]:g}, {SCALE_RANGE[1]:g}]"
    return v


@dataclass(frozen=True)
class MeasurementColumns(Alternatives):
    """``columns`` of a measurements table: which of the file's columns hold what (the others are ignored).

    A keyed union on the noise column: :class:`RhoColumns`, :class:`Sigma2Columns` or :class:`ScaleColumns` name
    it (at most one of ``rho``, ``sigma2``, ``scale``); :class:`HeaderColumns` (the default) finds it by name.
    """

    geolevel: str = documented("The column of geolevel names.", default="geolevel")
    query: str = documented("The column of queries.", default="query")
    weight: Optional[str] = documented(
        "The column of weights (> 0) of each measurement's variance in an allocation design; without it every "
        "weight is 1.",
        default=None,
    )

    def value_column(self) -> tuple[str, str] | None:
        """``(role, column)`` of the noise column this form names (role rho, sigma2 or scale), or ``None``."""
        return None

    @classmethod
    def choice_problem(cls, given: Sequence[str]) -> str:
        """``name exactly one of rho, sigma2, scale; got [...]``."""
        return f"name exactly one of rho, sigma2, scale; got {list(given)}"


@dataclass(frozen=True)
class HeaderColumns(MeasurementColumns):
    """No noise column named: the header's column literally named rho, sigma2 or scale."""


@dataclass(frozen=True, kw_only=True)
class RhoColumns(MeasurementColumns):
    """The noise column holds rho."""

    rho: str = documented("The column of rho (zCDP per query; Gaussian noise), e.g. 'rho(exact)'.")

    def value_column(self) -> tuple[str, str] | None:
        """``("rho", column)``."""
        return ("rho", self.rho)


@dataclass(frozen=True, kw_only=True)
class Sigma2Columns(MeasurementColumns):
    """The noise column holds sigma^2."""

    sigma2: str = documented("The column of the Gaussian noise variance per cell.")

    def value_column(self) -> tuple[str, str] | None:
        """``("sigma2", column)``."""
        return ("sigma2", self.sigma2)


@dataclass(frozen=True, kw_only=True)
class ScaleColumns(MeasurementColumns):
    """The noise column holds the Laplace scale."""

    scale: str = documented("The column of the Laplace scale per cell.")

    def value_column(self) -> tuple[str, str] | None:
        """``("scale", column)``."""
        return ("scale", self.scale)


ColumnsSpec = Union[HeaderColumns, RhoColumns, Sigma2Columns, ScaleColumns]
"""``measurements.columns``: at most one noise column named (a keyed union, :class:`MeasurementColumns`)."""


@dataclass(frozen=True)
class MeasurementsTable:
    """``measurements`` as a table: the publisher's CSV file as it is, its columns named, its rows filtered."""

    file: str = documented("The CSV file, relative to the spec (inside its folder).")
    columns: ColumnsSpec = documented(
        "Which columns hold geolevel, query, the noise (exactly one of rho, sigma2, scale; without one, the "
        "column literally named rho, sigma2 or scale) and optionally the weights. Columns not named are ignored.",
        default_factory=HeaderColumns,
    )
    where: Optional[dict[str, str]] = documented(
        "Keep only the rows whose named columns equal these values, e.g. { strategy = '...' }.", default=None
    )


MeasurementsKey = Union[str, MeasurementsTable]
"""``mechanism.measurements``: a file name (string form) or a :class:`MeasurementsTable`."""


def measurements_file(measurements: MeasurementsKey) -> str:
    """The file name of either form of ``mechanism.measurements``."""
    return measurements if isinstance(measurements, str) else measurements.file


def measurements_path(spec: Spec, file: str) -> Path:
    """The measurements file as shown in messages: relative to the spec's folder (read by :mod:`verify.spec_files`)."""
    return spec_folder(spec.path) / file


def _rows(text: str) -> Iterator[tuple[int, list[str] | None]]:
    """Every row with its line number (a row the CSV reader refuses: ``None``); blank and ``#`` lines skipped.
    A generator: a file of a million rows is never held as a million lists."""
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            yield n, next(csv.reader([line]))
        except csv.Error:  # a NUL byte, a field beyond the reader's size limit
            yield n, None


def _columns(header: list[str], measurements: MeasurementsKey, where: str) -> tuple[dict[str, int], str, list[Problem]]:
    """``({role: index}, value column role, problems)`` of the header row, in either form."""
    probs: list[Problem] = []
    if isinstance(measurements, str):
        value_cols = [c for c in header if c in VALUE_COLUMNS]
        unknown = [excerpt(c) for c in header if c not in ("geolevel", "query", WEIGHT_COLUMN, *VALUE_COLUMNS)]
        if unknown:
            probs.append(
                Problem(
                    KEY,
                    f"{where}: unknown column(s) {', '.join(unknown[:MAX_LISTED_PROBLEMS])}; expected geolevel, "
                    "query, one of rho, sigma2, scale and optionally weight (the table form { file, columns } "
                    "ignores other columns)",
                )
            )
        names = {"geolevel": "geolevel", "query": "query"}
        if len(value_cols) != 1:
            probs.append(
                Problem(KEY, f"{where}: needs exactly one of the columns rho, sigma2, scale; got {value_cols}")
            )
        else:
            names[value_cols[0]] = value_cols[0]
        if WEIGHT_COLUMN in header:
            names[WEIGHT_COLUMN] = WEIGHT_COLUMN
    else:
        c = measurements.columns
        names = {"geolevel": c.geolevel, "query": c.query}
        named = c.value_column()
        if named is not None:
            names[named[0]] = named[1]
        else:
            present = [r for r in VALUE_COLUMNS if r in header]
            if len(present) != 1:
                probs.append(
                    Problem(
                        f"{KEY}.columns",
                        f"{where}: name the noise column (rho, sigma2 or scale); the header has {present or 'none'}",
                    )
                )
            else:
                names[present[0]] = present[0]
        if c.weight is not None:
            names[WEIGHT_COLUMN] = c.weight
    col: dict[str, int] = {}
    for role, name in names.items():
        if name in header:
            col[role] = header.index(name)
        else:
            probs.append(Problem(KEY, f"{where}, column {excerpt(name)}: missing column (the {role} column)"))
    value_role = next((r for r in names if r in VALUE_COLUMNS), "")
    return col, value_role, probs


def read_measurements(spec: Spec, measurements: MeasurementsKey, noise: str) -> tuple[list[Measurement], list[Problem]]:
    """Read and check the measurements file (either form); every problem names the file, line and column.

    The file is read by :mod:`verify.spec_files` (inside the spec's folder, a regular file, size-capped); a
    message shows at most a short escaped excerpt of a cell; after :data:`MAX_LISTED_PROBLEMS` problems the
    rest are counted, not listed.
    """
    file = measurements_file(measurements)
    path = measurements_path(spec, file)
    key = KEY if isinstance(measurements, str) else f"{KEY}.file"
    try:
        text = read_text(spec.path, key, file)  # a byte-order mark (Excel's "CSV UTF-8") is not a column
    except SpecFileRefused as e:
        return [], [Problem(e.key, f"file {excerpt(file)}: {e.why}")]
    rows = _rows(text)
    first = next(rows, None)
    if first is None:
        return [], [Problem(KEY, f"{path}: empty file; expected a header geolevel,query,rho")]
    head_line, head_row = first
    where = f"{path}, line {head_line}"
    if head_row is None:
        return [], [Problem(KEY, f"{where}: not a CSV row (a NUL byte or an oversized field)")]
    header = [h.strip() for h in head_row]
    col, value_col, probs = _columns(header, measurements, where)
    filters = dict(measurements.where or {}) if isinstance(measurements, MeasurementsTable) else {}
    filter_col: dict[str, int] = {}
    for name in filters:
        if name in header:
            filter_col[name] = header.index(name)
        else:
            probs.append(Problem(f"{KEY}.where", f"{where}, column {excerpt(name)}: missing column"))
    if probs:
        return [], probs
    geo = list(geography_names(spec))
    out: list[Measurement] = []
    seen: dict[tuple[str, frozenset[str], str], int] = {}
    more = 0  # problems beyond MAX_LISTED_PROBLEMS: counted, not listed

    def problem(text: str) -> None:
        nonlocal more
        if len(probs) < MAX_LISTED_PROBLEMS:
            probs.append(Problem(KEY, text))
        else:
            more += 1

    split_of: dict[str, frozenset[str] | str] = {}  # the file repeats its queries and values: parse each once
    value_of: dict[str, tuple[Fraction, Fraction | None] | str] = {}
    weight_of: dict[str, Fraction | str] = {}

    selected = 0
    for lineno, row in rows:
        at = f"{path}, line {lineno}"
        if row is None:
            problem(f"{at}: not a CSV row (a NUL byte or an oversized field)")
            continue
        if len(row) != len(header):
            problem(f"{at}: has {len(row)} fields; the header has {len(header)}")
            continue
        if any(row[i].strip() != filters[n].strip() for n, i in filter_col.items()):
            continue
        selected += 1
        level = row[col["geolevel"]].strip()
        query = row[col["query"]].strip()
        bad = False
        if level not in geo:
            problem(f"{at}, column {_shown(measurements, 'geolevel')}: {excerpt(level)} is not in data.geography {geo}")
            bad = True
        splits = split_of.get(query)
        if splits is None:
            splits = split_of[query] = _splits(spec, query)
        if isinstance(splits, str):
            problem(f"{at}, column {_shown(measurements, 'query')}: {splits}")
        cell = row[col[value_col]]
        value = value_of.get(cell)
        if value is None:
            value = _parse_value(cell, value_col, noise)
            if len(value_of) < VALUE_CACHE:
                value_of[cell] = value
        if isinstance(value, str):
            problem(f"{at}, column {_shown(measurements, value_col)}: {value}")
        weight: Fraction | str = Fraction(1)
        if WEIGHT_COLUMN in col:
            wcell = row[col[WEIGHT_COLUMN]]
            cached = weight_of.get(wcell)
            weight = cached if cached is not None else _parse_weight(wcell)
            if cached is None and len(weight_of) < VALUE_CACHE:
                weight_of[wcell] = weight
            if isinstance(weight, str):
                problem(f"{at}, column {_shown(measurements, WEIGHT_COLUMN)}: {weight}")
        if bad or isinstance(splits, str) or isinstance(value, str) or isinstance(weight, str):
            continue
        ident = (level, splits, _histogram_name(spec, query))
        if ident in seen:
            problem(
                f"{at}, column {_shown(measurements, 'query')}: {level} {excerpt(query)} repeats line {seen[ident]}"
            )
            continue
        seen[ident] = lineno
        fixing = _fixing(spec, level, splits)
        why = fixing.reason(level, geography_units(spec), tuple(geo)) if fixing is not None else ""
        out.append(
            Measurement(
                lineno,
                level,
                query,
                splits,
                value[0],
                value[1],
                fixed=fixing is not None,
                fixed_by=why,
                fixed_by_order=fixing.by_order if fixing else "",
                weight=weight,
            )
        )
    if more:
        probs.append(Problem(KEY, f"{path}: {more} more problem(s) not listed (the first {MAX_LISTED_PROBLEMS} are)"))
    if filters and not selected:
        shown = ", ".join(f"{excerpt(k)} = {excerpt(v)}" for k, v in filters.items())
        probs.append(Problem(f"{KEY}.where", f"{where}, column(s) {list(filters)}: no row has {shown}"))
    elif not out and not probs:
        probs.append(Problem(KEY, f"{path}: no measurements"))
    return out, probs + order_problems(spec, out)


def _shown(measurements: MeasurementsKey, role: str) -> str:
    """The file's name of the column playing ``role`` (escaped), as messages show it."""
    if isinstance(measurements, str):
        return role
    return excerpt(getattr(measurements.columns, role) or role)


__all__ = [
    "GEOLEVEL_STANDIN_LEVELS",
    "MAX_MEASUREMENT_RHO",
    "MIN_LAPLACE_SCALE",
    "WEIGHT_COLUMN",
    "Fixing",
    "Measurement",
    "ColumnsSpec",
    "HeaderColumns",
    "MeasurementColumns",
    "RhoColumns",
    "ScaleColumns",
    "Sigma2Columns",
    "MeasurementsKey",
    "MeasurementsTable",
    "attribute_features",
    "clash_problems",
    "data_problems",
    "geography_names",
    "geography_units",
    "measurements_file",
    "measurements_path",
    "omitted_key_problems",
    "order_problems",
    "read_measurements",
    "recode_map",
    "with_geography_features",
]
