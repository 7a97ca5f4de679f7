r"""Lattice targets of the generalized Laplace / Gaussian mechanisms (Dharangutte et al. 2023, Def 9, Def 13).

The noise lattice is :math:`\Lambda=\{\mathbf Cs: s\in\mathbb Z^m\}` for an integer
basis matrix ``C`` (d x m, columns = a :math:`\mathbb Z`-basis of
:math:`\ker\mathbf A\cap\mathbb Z^d`; ``docs/reference/subspace-integer-postprocessing.md``
§3.2). A target is an unnormalised law on lattice coordinates ``s``:
:math:`\log\pi(s)=-\mathrm{scale}\cdot E(\mathbf Cs)`.

* :class:`LatticeLaplaceTarget` -- :math:`E(z)=\|z\|_p`, scale :math:`\varepsilon`
  (the generalized Laplace mechanism, [DGGY23, Def. 9]);
* :class:`LatticeGaussianTarget` -- :math:`E(z)=\|z\|_2^2`, scale
  :math:`1/(2\sigma^2)`, centre 0 (the generalized Gaussian, [DGGY23, Def. 13]).

Energies are exact ``int64`` integers (l1, Gaussian) or float64 square roots of
exact integer sums (l2); :attr:`LatticeTarget.magnitude_limit` is the largest
noise entry for which that stays exact, and the sampler refuses to go beyond it.

References
----------
[DGGY23] P. Dharangutte, J. Gao, R. Gong, F.-Y. Yu, "Integer Subspace
Differential Privacy", AAAI-23, arXiv:2212.00936 (AAAI numbering): Def 9, Def 13.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_positive
from semidp.accountant.core.errors import InvalidArgument

__all__ = ["LatticeGaussianTarget", "LatticeLaplaceTarget", "LatticeTarget", "Norm"]

#: Magnitudes of noise coordinates are kept below this (int64 sums of squares of d entries).
_SAFE = 2**62

Norm = Literal["l1", "l2"]


def _check_basis(C: ArrayLike) -> NDArray[np.int64]:
    arr = np.asarray(C)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InvalidArgument(f"C must be a non-empty 2-D integer matrix (d x m); got shape {arr.shape}.")
    if not np.issubdtype(arr.dtype, np.integer):
        raise InvalidArgument(f"C must have an integer dtype (exact lattice basis); got {arr.dtype}.")
    out = arr.astype(np.int64)
    if int(np.abs(out).max(initial=0)) > 2**20:
        raise InvalidArgument("C has entries beyond 2**20; reduce the basis (e.g. LLL) first.")
    if np.linalg.matrix_rank(out.astype(np.float64)) != out.shape[1]:
        raise InvalidArgument(
            f"C ({out.shape[0]} x {out.shape[1]}) must have full column rank: dependent columns "
            "would count each lattice point many times and change the law of z = C s."
        )
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class LatticeTarget:
    r"""Common part of the lattice targets: :math:`\log\pi(s)=-\mathrm{scale}\cdot E(\mathbf Cs)`.

    Subclasses fix the energy :math:`E` and the scale; the law of the noise is
    :math:`\Pr[z]\propto e^{-\mathrm{scale}\,E(z)}` on :math:`\Lambda=\mathbf C\mathbb Z^m`.
    ``C`` must be a :math:`\mathbb Z`-basis of the kernel lattice (saturated);
    that is not checked here (it needs the invariant matrix).
    """

    C: NDArray[np.int64] = field(repr=False)
    """d x m integer basis matrix (columns = lattice basis vectors)."""

    @property
    def d(self) -> int:
        """Number of cells (length of the noise vector ``z``)."""
        return int(self.C.shape[0])

    @property
    def m(self) -> int:
        """Lattice dimension (number of coordinates of ``s``)."""
        return int(self.C.shape[1])

    @property
    def scale(self) -> float:
        """Multiplier of the energy in the log-density."""
        raise NotImplementedError

    @property
    def width(self) -> float:
        """Per-coordinate width of the target (1/epsilon or sigma), used by the default tuning."""
        raise NotImplementedError

    @property
    def _squares(self) -> bool:
        """True if the energy is built from the squares ``z_i**2`` (l2, Gaussian), False if from ``|z_i|`` (l1)."""
        raise NotImplementedError

    @property
    def tuning_constant(self) -> float:
        r"""``c`` in the default proposal rule ``a = exp(-c / width)``.

        4 for an l1 energy, 6 for one built from squares: :math:`a=e^{-1}` / :math:`e^{-1.5}`
        at :math:`\varepsilon=0.25` (DGGY's tuning); the Gaussian uses the l2 value with width sigma.
        """
        return 6.0 if self._squares else 4.0

    @property
    def magnitude_limit(self) -> int:
        """Largest ``|z_i|`` for which the energy is computed exactly in int64 (sum of d absolute values or squares)."""
        return math.isqrt(_SAFE // self.d) if self._squares else _SAFE // self.d

    def energy(self, z: NDArray[np.int64]) -> NDArray[np.int64] | NDArray[np.float64]:
        """Energy of noise vectors ``z`` (last axis = cells); vectorised."""
        raise NotImplementedError

    def energy_into(
        self,
        z: NDArray[np.int64],
        work: NDArray[np.int64],
        out: NDArray[np.int64] | NDArray[np.float64],
    ) -> None:
        """``out[:] = energy(z)`` for (chains x d) ``z``, using the buffer ``work`` (same shape)."""
        out[...] = self.energy(z)

    def noise(self, s: ArrayLike) -> NDArray[np.int64]:
        """Exact noise ``z = C s`` for lattice coordinates ``s`` (..., m) -> (..., d)."""
        arr = np.asarray(s)
        if arr.shape[-1:] != (self.m,) or not np.issubdtype(arr.dtype, np.integer):
            raise InvalidArgument(f"s must be an integer array with last axis {self.m}; got {arr.shape}.")
        bound = int(np.abs(arr).max(initial=0)) * int(np.abs(self.C).sum(axis=1).max())
        if bound > self.magnitude_limit:
            raise InvalidArgument(f"|C s| may reach {bound}, beyond the int64-safe {self.magnitude_limit}.")
        return np.asarray(arr.astype(np.int64) @ self.C.T, dtype=np.int64)

    @cached_property
    def _sparse(self) -> Any:
        return scipy.sparse.csr_matrix(self.C.astype(np.float64))

    def increments(self, e: NDArray[np.int64] | NDArray[np.float64]) -> NDArray[np.int64]:
        """``C e`` for integer-valued increments ``e`` (n x m) -> (n x d) int64.

        A sparse float64 product (the basis matrices are sparse; dense BLAS was
        10-50x slower here): exact when every ``|(C e)_i|`` is below ``2**52``,
        which callers guarantee (the sampler's ``max_step``).
        """
        out = (self._sparse @ np.asarray(e, dtype=np.float64).T).T
        return np.asarray(out.astype(np.int64, order="C"), dtype=np.int64)

    def log_density(self, s: ArrayLike) -> NDArray[np.float64]:
        r"""Unnormalised :math:`\log\pi(s)=-\mathrm{scale}\cdot E(\mathbf Cs)` for an (chains x m) int array."""
        return -self.scale * np.asarray(self.energy(self.noise(s)), dtype=np.float64)

    def default_ratio(self) -> float:
        r"""Default proposal ratio :math:`a=\exp(-c/w)`, ``w = width``, ``c = tuning_constant``.

        Reproduces DGGY's tuning at :math:`\varepsilon=0.25` (:math:`a=e^{-1}` for
        l1, :math:`e^{-1.5}` for l2; reference §3.5) and scales the proposal with
        the target's width (:math:`1/\varepsilon` or :math:`\sigma`). A heuristic: it
        ignores the dimension (DGGY used :math:`e^{-2.5}` for 101 lattice
        coordinates at :math:`\varepsilon=0.192`); pass ``ratio=`` to override.
        """
        return min(max(math.exp(-self.tuning_constant / self.width), 1e-12), 1.0 - 1e-9)


@dataclass(frozen=True, eq=False)
class LatticeLaplaceTarget(LatticeTarget):
    r"""Generalized Laplace target :math:`q_\varepsilon(z)\propto e^{-\varepsilon\|z\|_p}` on :math:`\Lambda` [DGGY23, Def. 9].

    ``epsilon`` is per unit of the chosen norm (Thm 10: :math:`(\varepsilon,0)` on
    equivalent pairs, loss :math:`\varepsilon\|x-x'\|_p`). l1 energies are exact
    integers; l2 energies are float64 square roots of exact integer sums.

    Examples
    --------
    >>> import numpy as np
    >>> t = LatticeLaplaceTarget(np.array([[1], [-1]]), 0.25)
    >>> t.log_density(np.array([[3], [0]])).tolist()
    [-1.5, -0.0]
    """

    epsilon: float = 1.0
    """Privacy parameter per unit of ``norm``."""
    norm: Norm = "l1"
    """``"l1"`` or ``"l2"``: the norm of the guarantee and of the target."""

    def __init__(self, C: ArrayLike, epsilon: float, norm: Norm = "l1") -> None:
        object.__setattr__(self, "C", _check_basis(C))
        object.__setattr__(self, "epsilon", check_positive("epsilon", epsilon))
        if norm not in ("l1", "l2"):
            raise InvalidArgument(f"norm={norm!r} must be 'l1' or 'l2'.")
        object.__setattr__(self, "norm", norm)

    @property
    def scale(self) -> float:
        """epsilon."""
        return self.epsilon

    @property
    def width(self) -> float:
        """1 / epsilon."""
        return 1.0 / self.epsilon

    @property
    def _squares(self) -> bool:
        return self.norm == "l2"

    def energy(self, z: NDArray[np.int64]) -> NDArray[np.int64] | NDArray[np.float64]:
        """``||z||_1`` (int64) or ``||z||_2`` (float64) along the last axis."""
        if self.norm == "l1":
            return np.asarray(np.abs(z).sum(axis=-1), dtype=np.int64)
        return np.sqrt(np.asarray((z * z).sum(axis=-1), dtype=np.float64))

    def energy_into(
        self,
        z: NDArray[np.int64],
        work: NDArray[np.int64],
        out: NDArray[np.int64] | NDArray[np.float64],
    ) -> None:
        """In-place :meth:`energy` (the sampler's inner loop)."""
        if self.norm == "l1":
            np.abs(z, out=work)
            np.add.reduce(work, axis=1, out=out)
        else:
            np.multiply(z, z, out=work)
            np.sqrt(np.add.reduce(work, axis=1), out=out)

    def __repr__(self) -> str:
        return f"LatticeLaplaceTarget(C=<{self.d}x{self.m}>, epsilon={self.epsilon!r}, norm={self.norm!r})"


@dataclass(frozen=True, eq=False)
class LatticeGaussianTarget(LatticeTarget):
    r"""Generalized (lattice) Gaussian target :math:`\propto e^{-\|z\|_2^2/(2\sigma^2)}`, centre 0 [DGGY23, Def. 13].

    Energies :math:`\|z\|_2^2` are exact int64 integers. Calibration of
    :math:`\sigma`: see :func:`mechanisms.lattice_privacy.gaussian_zcdp_rho`
    (not the paper's constant, which was not recovered).

    Examples
    --------
    >>> import numpy as np
    >>> LatticeGaussianTarget(np.array([[1], [-1]]), 2.0).log_density(np.array([[2]])).tolist()
    [-1.0]
    """

    sigma: float = 1.0
    """Scale parameter sigma (the lattice Gaussian's variance is close to, not equal to, sigma^2)."""

    def __init__(self, C: ArrayLike, sigma: float) -> None:
        object.__setattr__(self, "C", _check_basis(C))
        object.__setattr__(self, "sigma", check_positive("sigma", sigma))

    @property
    def scale(self) -> float:
        """1 / (2 sigma^2)."""
        return 1.0 / (2.0 * self.sigma * self.sigma)

    @property
    def width(self) -> float:
        """sigma."""
        return self.sigma

    @property
    def _squares(self) -> bool:
        return True

    def energy(self, z: NDArray[np.int64]) -> NDArray[np.int64] | NDArray[np.float64]:
        """``||z||_2^2`` (int64) along the last axis."""
        return np.asarray((z * z).sum(axis=-1), dtype=np.int64)

    def energy_into(
        self,
        z: NDArray[np.int64],
        work: NDArray[np.int64],
        out: NDArray[np.int64] | NDArray[np.float64],
    ) -> None:
        """In-place :meth:`energy` (the sampler's inner loop)."""
        np.multiply(z, z, out=work)
        np.add.reduce(work, axis=1, out=out)

    def __repr__(self) -> str:
        return f"LatticeGaussianTarget(C=<{self.d}x{self.m}>, sigma={self.sigma!r})"
