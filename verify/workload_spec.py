"""Measurement workloads in specs: ``[data] geography`` / ``recodes`` and the measurements CSV of a published release.

A workload spec (contract: ``specs/README.md``, "Measurement workloads") names a CSV file of
measurements, one a line: ``geolevel,query`` and the noise of every cell, as ``rho`` (zCDP of the
histogram query under replace-one, so :math:`\\sigma^2=1/\\rho` [CKS20, Prop. 5]), ``sigma2``
(Gaussian kinds) or ``scale`` (Laplace kinds: ``b`` or ``t``), exact rationals accepted. A query is
``total``, ``detailed`` (every feature) or feature/recode names joined by `` * ``.

This module reads and checks the file (each problem names the file, line and column) and turns
it into :class:`~accountant.workload.WorkloadMeasurement` values; it also gives the loader the
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
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from semidp.accountant.workload import GAUSSIAN_NOISES, WorkloadMeasurement
from semidp.verify.registry import Problem
from semidp.verify.spec import FeatureSpec, GeolevelSpec, RecodeSpec, Spec

#: Levels of the stand-in feature of a geolevel named by the invariant: a(t) under a partition
#: invariant does not depend on the number of its parts once there are two.
GEOLEVEL_STANDIN_LEVELS = 2

KEY = "mechanism.measurements"
VALUE_COLUMNS = ("rho", "sigma2", "scale")
#: Accepted range of a noise parameter (sigma^2, or the Laplace scale): its float must be normal and finite.
SCALE_RANGE = (1e-300, 1e300)


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
    """Exactly one of ``map`` (one level >= 0 per level of the feature) or ``bins`` (cut points in 1..levels-1)."""
    if (r.map is None) == (r.bins is None):
        return [
            Problem(
                key,
                "give exactly one of map (a new level per level) or bins (cut points); got "
                + ("both" if r.map is not None else "neither"),
            )
        ]
    probs: list[Problem] = []
    if r.map is not None:
        if levels is not None and len(r.map) != levels:
            probs.append(Problem(f"{key}.map", f"has {len(r.map)} entries; feature {r.of!r} has {levels} levels"))
        if any(v is not None and v < 0 for v in r.map):
            probs.append(Problem(f"{key}.map", "levels must be >= 0"))
        return probs
    bins = r.bins or ()
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
    if r.map is not None:
        return r.map
    return tuple(sum(1 for c in r.bins or () if c <= level) for level in range(levels))


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
            return f"unknown feature or recode {n!r} (known: total, detailed, {sorted([*feats, *recodes])})"
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
    """``(scale, rho)`` from a value cell, or the problem text."""
    try:
        v = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        return f"{text!r} is not a number or an exact 'p/q' rational"
    if v <= 0:
        return f"must be > 0, got {text!r}"
    if not SCALE_RANGE[0] <= (1 / v if column == "rho" else v) <= SCALE_RANGE[1]:
        noun = "sigma^2 = 1/rho" if column == "rho" else column
        return f"{text!r} is out of range: {noun} must lie in [{SCALE_RANGE[0]:g}, {SCALE_RANGE[1]:g}]"
    if column == "rho":
        if noise not in GAUSSIAN_NOISES:
            return f"a rho column needs Gaussian noise; with noise = {noise!r} give the scale (column 'scale')"
        return 1 / v, v
    if column == "sigma2" and noise not in GAUSSIAN_NOISES:
        return f"sigma2 is the variance of Gaussian noise; with noise = {noise!r} give 'scale'"
    if column == "scale" and noise in GAUSSIAN_NOISES:
        return f"scale is the Laplace scale; with noise = {noise!r} give 'rho' or 'sigma2'"
    return v, None


def measurements_path(spec: Spec, file: str) -> Path:
    """The measurements file, relative to the spec's directory."""
    base = Path(spec.path).parent if spec.path not in ("", "<string>") else Path(".")
    return base / file


def read_measurements(spec: Spec, file: str, noise: str) -> tuple[list[Measurement], list[Problem]]:
    """Read and check the measurements file; every problem names the file, line and column."""
    path = measurements_path(spec, file)
    probs: list[Problem] = []
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark (Excel's "CSV UTF-8") is not a column
    except OSError as e:
        return [], [Problem(KEY, f"cannot read {str(path)!r}: {e.strerror}")]
    lines = text.splitlines()
    # every row with its line number; blank rows and '#' comment lines are skipped
    rows = [
        (n, next(csv.reader([line])))
        for n, line in enumerate(lines, start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not rows:
        return [], [Problem(KEY, f"{path}: empty file; expected a header geolevel,query,rho")]
    head_line, head_row = rows[0]
    header = [h.strip() for h in head_row]
    value_cols = [c for c in header if c in VALUE_COLUMNS]
    unknown = [c for c in header if c not in ("geolevel", "query", *VALUE_COLUMNS)]
    where = f"{path}, line {head_line}"
    if unknown:
        probs.append(
            Problem(
                KEY, f"{where}: unknown column(s) {unknown}; expected geolevel, query and one of rho, sigma2, scale"
            )
        )
    for c in ("geolevel", "query"):
        if c not in header:
            probs.append(Problem(KEY, f"{where}: missing column {c!r}"))
    if len(value_cols) != 1:
        probs.append(Problem(KEY, f"{where}: needs exactly one of the columns rho, sigma2, scale; got {value_cols}"))
    if probs:
        return [], probs
    col = {c: header.index(c) for c in ("geolevel", "query", value_cols[0])}
    geo = geography_names(spec)
    out: list[Measurement] = []
    seen: dict[tuple[str, frozenset[str], str], int] = {}
    for lineno, row in rows[1:]:
        if len(row) != len(header):
            probs.append(Problem(KEY, f"{path}, line {lineno}: has {len(row)} fields; the header has {len(header)}"))
            continue
        level = row[col["geolevel"]].strip()
        query = row[col["query"]].strip()
        bad = len(probs)
        if level not in geo:
            probs.append(
                Problem(KEY, f"{path}, line {lineno}, column geolevel: {level!r} is not in data.geography {list(geo)}")
            )
        splits = _splits(spec, query)
        if isinstance(splits, str):
            probs.append(Problem(KEY, f"{path}, line {lineno}, column query: {splits}"))
        value = _parse_value(row[col[value_cols[0]]], value_cols[0], noise)
        if isinstance(value, str):
            probs.append(Problem(KEY, f"{path}, line {lineno}, column {value_cols[0]}: {value}"))
        if len(probs) > bad or isinstance(splits, str) or isinstance(value, str):
            continue
        ident = (level, splits, _histogram_name(spec, query))
        if ident in seen:
            probs.append(
                Problem(KEY, f"{path}, line {lineno}, column query: {level} {query!r} repeats line {seen[ident]}")
            )
            continue
        seen[ident] = lineno
        fixing = _fixing(spec, level, splits)
        why = fixing.reason(level, geography_units(spec), geo) if fixing is not None else ""
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
            )
        )
    if not out and not probs:
        probs.append(Problem(KEY, f"{path}: no measurements"))
    return out, probs + order_problems(spec, out)


__all__ = [
    "GEOLEVEL_STANDIN_LEVELS",
    "Fixing",
    "Measurement",
    "attribute_features",
    "clash_problems",
    "data_problems",
    "geography_names",
    "geography_units",
    "measurements_path",
    "omitted_key_problems",
    "order_problems",
    "read_measurements",
    "recode_map",
    "with_geography_features",
]
