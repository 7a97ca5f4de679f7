r"""On-disk cache of optimal K-norm balls :math:`K=\operatorname{conv}(S)` [CA24, Alg. 2, Thm. 31].

:meth:`accountant.geometry.knorm.KNormBall.from_space` (the hull of Alg. 2's optimal
ball) is the expensive step of the K-norm mechanism: seconds at 4x4 with
3-cycles, minutes beyond. :func:`cached_knorm_ball` builds it once per
sensitivity space and stores it; later calls load it and **re-verify it
before use**, because the privacy of the sampler rests on the stored fan.

Cache files: one ``knorm-<key>.npz`` per ball in :func:`default_cache_dir`,
written with :func:`numpy.savez_compressed` (the JSON metadata is stored inside
it as a ``uint8`` array, so arrays and metadata are replaced together by one
``os.replace`` and a reader never sees half a file). Loading uses
``allow_pickle=False`` only. The key is the SHA-256 of a canonical encoding of
the space (sorted integer rows, dtype, shape), the symmetry group, the build
options that change the result, the file format and the package version.

What a load re-checks (:func:`~accountant.geometry.knorm_verify.verify_knorm_ball`, no convex hull; any failure
means rebuild and overwrite, reported as ``CacheInfo(status="rebuilt")``):

* the stored vectors equal the requested space exactly; the basis is
  orthonormal and spans S (:math:`QQ^\top u=u` for every element, rank s);
  vertices are elements of S in those coordinates;
* the construction checks of ``KNormBall._check`` except its qhull volume:
  every element of S has facet gauge :math:`\le1+10^{-9}`, every vertex
  :math:`\ge1-10^{-9}`, facets are distinct and come in :math:`\pm` pairs;
* fan volumes :math:`|\det|/s!` recomputed from the fan points, the CDF and
  the total volume;
* that the fan tiles K, which is what makes the sampler uniform. Each
  non-degenerate simplex lies on a stored facet F. Without symmetry, within
  each F every wall of a simplex is either shared by exactly two simplices on
  opposite sides or lies on a second stored facet (so on :math:`\partial F`),
  and one probe point is covered once: by the degree argument the simplices
  tile F, and every ridge of a stored facet has its neighbour stored, so no
  facet is missing. With symmetry the same test runs one level down, on the
  bases of the cones from each representative facet's centroid over its
  ridges; an unshared wall must then lie on a second triangulated ridge (each
  face of F of dimension s - 3 is in exactly two ridges), so no ridge lacks
  simplices. Also: centroids are the vertex centroids of their facets, orbit
  sizes from :meth:`TableSymmetry.canonical` equal the multiplicities, and the
  facet list is invariant under the group's generators and is the disjoint
  union of the representatives' orbits.

Balls whose fan has more than one level (a facet triangulated recursively by
:mod:`accountant.geometry.face_fan`: 3x7 and 4x5 tables with 3-cycles) are refused by
this re-verification, so they are built, used and reported ``not stored``,
never written.

Flat simplices (:math:`|\det|\le10^{-9}\max|\det|`, as qhull ``Qt``
produces) are only checked to carry at most :math:`10^{-9}` of the volume;
their points are fan points, hence in K. The zip CRC catches accidental
corruption; the geometric checks catch files that are valid zips but do not
hold a correct ball.

References
----------
[CA24] Cho & Awan, arXiv:2410.17468v1, Alg. 2, Prop. 7, Thm. 31.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument, VerificationError
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_verify import verify_knorm_ball
from semidp.accountant.geometry.table_symmetry import TableSymmetry
from semidp.accountant.guarantees.relations import Relation
from semidp.accountant.sensitivity.spaces import SensitivitySpace

#: Version of the on-disk layout; part of the key, so a new layout never reads an old file.
FORMAT_VERSION = 1

#: Environment variable naming the cache directory (used as is).
CACHE_ENV = "SEMIDP_CACHE_DIR"

#: The builder in the key, named as when the ball's module was the flat ``knorm``: a label of the key, kept
#: so that balls cached before the subpackages keep their names (joined so a rename of the module leaves it alone).
BUILDER_KEY = ".".join(("accountant", "knorm", "KNormBall", "from_space"))

#: Options of :meth:`KNormBall.from_space` accepted by :func:`cached_knorm_ball`. Only
#: ``expand_limit`` (with symmetry) changes the stored ball; the others are budgets that
#: decide whether a build is attempted, so they are not part of the key.
BUILD_OPTIONS = ("work_limit", "orbit_limit", "time_limit", "expand_limit")

_TOL = 1e-9  # same one-sided tolerance as accountant.geometry.knorm.GEOMETRY_RTOL
_MATCH = 1e-7  # distance under which two stored facet normals are the same
_FLOATS = ("basis", "vertices", "facets", "fan_points", "fan_volumes", "fan_cdf", "volume")
_INTS = ("space", "vertex_vectors", "fan", "fan_multiplicity")
_LOAD_ERRORS = (
    OSError,
    ValueError,
    KeyError,
    EOFError,
    TypeError,
    IndexError,
    AttributeError,
    zipfile.BadZipFile,
    zlib.error,
    VerificationError,
    np.linalg.LinAlgError,
)

Status = Literal["hit", "miss", "rebuilt", "disabled"]
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
Arrays = dict[str, NDArray[np.generic]]
Partner = tuple[NDArray[np.bool_], NDArray[np.intp], NDArray[np.intp]]


@dataclass(frozen=True, slots=True)
class CacheInfo:
    """What :func:`cached_knorm_ball` did (house style R9: the outcome is reported, never silent)."""

    status: Status
    """``hit`` (loaded and re-verified), ``miss`` (no file: built and stored), ``rebuilt`` (a file
    existed but was refused, or ``refresh=True``: built and overwritten), ``disabled`` (cache off)."""
    key: str
    """SHA-256 hex digest naming the ball (:func:`cache_key`)."""
    path: Path | None
    """The cache file (None when disabled)."""
    build_seconds: float
    """Wall-clock seconds spent in :meth:`KNormBall.from_space` (0 on a hit)."""
    load_seconds: float
    """Wall-clock seconds spent reading and re-verifying a file (0 if none was read)."""
    reason: str = ""
    """Why a file was refused or not stored (empty on a plain hit or miss)."""

    @property
    def seconds(self) -> float:
        """Total time, build plus load."""
        return self.build_seconds + self.load_seconds


def default_cache_dir() -> Path:
    """``$SEMIDP_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/semidp/knorm`` (an absolute
    ``XDG_CACHE_HOME`` only, as the XDG spec says), else ``~/.cache/semidp/knorm``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "semidp" / "knorm"


def _package_version() -> str:
    try:
        return metadata.version("semidp")
    except metadata.PackageNotFoundError:  # pragma: no cover - bare checkout
        return "0+unknown"


def _symmetry_json(sym: TableSymmetry | None) -> dict[str, object] | None:
    return None if sym is None else {"kind": "TableSymmetry", "rows": sym.rows, "cols": sym.cols}


def _symmetry_from_json(obj: object) -> TableSymmetry | None:
    if obj is None:
        return None
    if not isinstance(obj, dict) or obj.get("kind") != "TableSymmetry":
        raise VerificationError(f"unknown symmetry description {obj!r}.")
    return TableSymmetry(int(obj["rows"]), int(obj["cols"]))


def _space_array(space: SensitivitySpace) -> IntArray:
    rows = np.array(sorted(space.vectors), dtype="<i8").reshape(space.size, space.dimension)
    return np.ascontiguousarray(rows)


def _check_options(symmetry: TableSymmetry | None, options: dict[str, float]) -> dict[str, float]:
    """Refuse unknown options; return the ones that change the built ball (for the key)."""
    unknown = sorted(set(options) - set(BUILD_OPTIONS))
    if unknown:
        raise InvalidArgument(f"unknown build option(s) {unknown}; expected some of {list(BUILD_OPTIONS)}.")
    if symmetry is not None and "expand_limit" in options:
        return {"expand_limit": float(options["expand_limit"])}
    return {}


def cache_key(space: SensitivitySpace, *, symmetry: TableSymmetry | None = None, **build_options: float) -> str:
    """SHA-256 naming the ball :meth:`KNormBall.from_space` builds for these arguments [CA24, Alg. 2].

    Hashes a canonical JSON header (format and package version, builder, dtype
    ``<i8`` and shape of the sorted rows, symmetry by its constructor arguments,
    result-changing options) followed by the raw little-endian rows. The space
    label and the relation are not part of the key (they do not change the ball).

    Examples
    --------
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> a = cache_key(table_space(3, 3))
    >>> len(a), a == cache_key(table_space(3, 3, paper_exact=True)), a == cache_key(table_space(3, 3))
    (64, False, True)
    """
    arr = _space_array(space)
    header = {
        "format": FORMAT_VERSION,
        "package": _package_version(),
        "builder": BUILDER_KEY,
        "dtype": arr.dtype.str,
        "shape": list(arr.shape),
        "symmetry": _symmetry_json(symmetry),
        "options": _check_options(symmetry, build_options),
    }
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(text + b"\0" + arr.tobytes()).hexdigest()


# ----------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------


def _to_arrays(ball: KNormBall, key: str) -> Arrays:
    meta = {
        "format": FORMAT_VERSION,
        "key": key,
        "package": _package_version(),
        "method": ball.method,
        "symmetry": _symmetry_json(ball.symmetry),
        "facet_orbit_sizes": list(ball.facet_orbit_sizes),
    }
    return {
        "space": _space_array(ball.space),
        "basis": ball.basis,
        "vertices": ball.vertices,
        "vertex_vectors": np.asarray(ball.vertex_vectors, dtype=np.int64),
        "facets": ball.facets,
        "fan_points": ball.fan_points,
        "fan": np.asarray(ball.fan, dtype=np.int64),
        "fan_volumes": ball.fan_volumes,
        "fan_multiplicity": np.asarray(ball.fan_multiplicity, dtype=np.int64),
        "fan_cdf": ball.fan_cdf,
        "volume": np.array(ball.volume, dtype=np.float64),
        "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8),
    }


def _write_atomic(path: Path, arrays: Arrays) -> None:
    """Write ``arrays`` to ``path`` via a temporary file in the same directory and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".knorm-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read(path: Path) -> Arrays:
    with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as z:  # never unpickle
        return {k: np.asarray(z[k]) for k in z.files}


def _from_arrays(
    arr: Arrays, space: SensitivitySpace, key: str, symmetry: TableSymmetry | None, relation: Relation | None
) -> KNormBall:
    """Rebuild the dataclass from stored arrays (structure only; the geometry is checked afterwards)."""
    expected = set(_FLOATS) | set(_INTS) | {"meta"}
    if set(arr) != expected:
        raise VerificationError(f"stored arrays {sorted(arr)} != {sorted(expected)}.")
    for k in _FLOATS:
        if arr[k].dtype != np.float64 or not np.all(np.isfinite(arr[k])):
            raise VerificationError(f"array {k!r} is not finite float64.")
    for k in _INTS:
        if arr[k].dtype != np.int64:
            raise VerificationError(f"array {k!r} is not int64.")
    meta = json.loads(arr["meta"].astype(np.uint8).tobytes().decode())
    if meta.get("format") != FORMAT_VERSION or meta.get("key") != key:
        raise VerificationError("metadata names another format or key.")
    if not np.array_equal(arr["space"], _space_array(space)):
        raise VerificationError("stored space vectors differ from the requested space.")
    ball_sym = _symmetry_from_json(meta.get("symmetry"))
    if ball_sym is not None and ball_sym != symmetry:
        raise VerificationError(f"stored symmetry {ball_sym!r} was not requested ({symmetry!r}).")
    f64 = {k: np.asarray(arr[k], dtype=np.float64) for k in _FLOATS}
    return KNormBall(
        space=space,
        basis=f64["basis"],
        vertices=f64["vertices"],
        vertex_vectors=np.asarray(arr["vertex_vectors"]),
        facets=f64["facets"],
        fan_points=f64["fan_points"],
        fan=np.asarray(arr["fan"], dtype=np.intp),
        fan_volumes=f64["fan_volumes"],
        fan_multiplicity=np.asarray(arr["fan_multiplicity"]),
        fan_cdf=f64["fan_cdf"],
        volume=float(f64["volume"]),
        relation=relation,
        method=str(meta["method"]),
        symmetry=ball_sym,
        facet_orbit_sizes=tuple(int(x) for x in meta["facet_orbit_sizes"]),
    )


# ----------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------


def cached_knorm_ball(
    space: SensitivitySpace,
    *,
    relation: Relation | None = None,
    symmetry: TableSymmetry | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    refresh: bool = False,
    use_cache: bool = True,
    budget: Budget | None = None,
    **build_options: float,
) -> tuple[KNormBall, CacheInfo]:
    r""":meth:`KNormBall.from_space` through a verified on-disk cache [CA24, Alg. 2, Thm. 31].

    Parameters
    ----------
    space, relation, symmetry:
        As for :meth:`KNormBall.from_space`. The returned ball carries this
        ``space`` object and ``relation`` (neither is read from the file).
    cache_dir:
        Directory of the cache files; default :func:`default_cache_dir`.
    refresh:
        Rebuild and overwrite even if a valid file exists.
    use_cache:
        False builds without reading or writing anything (status ``disabled``).
    budget:
        The build's wall-clock :class:`~semidp.accountant.core.budget.Budget` (default as for
        :meth:`KNormBall.from_space`); no effect on the key.
    **build_options:
        ``work_limit``, ``orbit_limit``, ``expand_limit`` for the build (``time_limit``: deprecated, use
        ``budget``).

    Returns
    -------
    (KNormBall, CacheInfo)
        A ball equal, array for array, to a fresh build (a hit returns the stored
        arrays after :func:`verify_knorm_ball`), and what happened.

    Raises
    ------
    InvalidArgument
        An unknown build option; anything :meth:`KNormBall.from_space` raises
        (e.g. ``SearchTooLarge``, a symmetry S is not invariant under) when a
        build is needed.

    Notes
    -----
    A file that cannot be read or fails re-verification is rebuilt and
    overwritten (``status="rebuilt"``, ``reason`` says why); nothing is trusted
    unchecked and no warning is issued. A freshly built ball that does not pass
    :func:`verify_knorm_ball` (e.g. facets not expanded beyond ``expand_limit``)
    is returned but not stored; ``reason`` says so. Concurrent writers are safe:
    each writes its own temporary file and renames it into place.

    Examples
    --------
    >>> import tempfile
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _, first = cached_knorm_ball(table_space(3, 3), cache_dir=d)
    ...     ball, second = cached_knorm_ball(table_space(3, 3), cache_dir=d)
    >>> first.status, second.status, round(ball.volume, 9)     # 47.25 = 189/4, tests/test_knorm_ball.py
    ('miss', 'hit', 47.25)
    """
    key = cache_key(space, symmetry=symmetry, **build_options)
    t0 = time.perf_counter()
    if not use_cache:
        ball = _build(space, relation, symmetry, build_options, budget)
        return ball, CacheInfo("disabled", key, None, time.perf_counter() - t0, 0.0, "use_cache=False")
    path = Path(cache_dir if cache_dir is not None else default_cache_dir()) / f"knorm-{key}.npz"
    status: Status = "miss"
    reason = ""
    if path.exists():
        status = "rebuilt"
        if refresh:
            reason = "refresh=True"
        else:
            try:
                ball = _from_arrays(_read(path), space, key, symmetry, relation)
                verify_knorm_ball(ball)
                return ball, CacheInfo("hit", key, path, 0.0, time.perf_counter() - t0)
            except _LOAD_ERRORS as e:
                reason = f"refused {path.name}: {type(e).__name__}: {e}"
    load_dt = time.perf_counter() - t0 if reason and not refresh else 0.0
    t1 = time.perf_counter()
    ball = _build(space, relation, symmetry, build_options, budget)
    build_dt = time.perf_counter() - t1
    try:
        verify_knorm_ball(ball)  # a ball that would be refused on load is not stored
        _write_atomic(path, _to_arrays(ball, key))
    except (VerificationError, OSError) as e:
        reason = (reason + "; " if reason else "") + f"not stored: {type(e).__name__}: {e}"
    return ball, CacheInfo(status, key, path, build_dt, load_dt, reason)


def _build(
    space: SensitivitySpace,
    relation: Relation | None,
    symmetry: TableSymmetry | None,
    options: dict[str, float],
    budget: Budget | None,
) -> KNormBall:
    return KNormBall.from_space(space, relation=relation, symmetry=symmetry, budget=budget, **options)  # type: ignore[arg-type]


__all__ = [
    "BUILD_OPTIONS",
    "CACHE_ENV",
    "FORMAT_VERSION",
    "CacheInfo",
    "cache_key",
    "cached_knorm_ball",
    "default_cache_dir",
    "verify_knorm_ball",
]
