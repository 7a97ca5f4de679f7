"""PLD engine vs Google's dp_accounting (issue Step 9, item 1), measured side by side in one run.

For k-fold Gaussian (sigma) and Laplace (b) compositions, k in {1, 10, 200, 1000}, scale in
{0.5, 5, 50}, prints epsilon at delta = 1e-10:

* ours: the certified bracket ``[lower, upper]`` of :func:`semidp.accountant.pld.engine.compose_plds`
  (default grid) and its width;
* dp_accounting: ``from_gaussian_mechanism`` / ``from_laplace_mechanism`` with
  ``pessimistic_estimate=True`` and ``value_discretization_interval=--dpa-grid``, ``self_compose(k)``,
  ``get_epsilon_for_delta``;
* the ratio ``ours_upper / dpa - 1`` (target <= 1e-3; negative = tighter), whether
  ``ours_lower <= dpa`` (dp_accounting's pessimistic value cannot be below the truth), and the
  median wall time of each (construction + composition + query) with their ratio.

For Gaussians the exact value (GDP, mu = sqrt(k)/sigma, ``accountant.profiles.gaussian.gdp_epsilon``) is
printed too. dp_accounting is a benchmark/test dependency only (``pip install dp_accounting``).

Run: python benchmarks/pld.py [--repeat N] [--dpa-grid H] [--points N]
(``--points 4096`` trades bracket width for speed; the upper bound stays certified.)
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings
from typing import Callable

from semidp.accountant.pld.engine import PLDInterval, compose_plds
from semidp.accountant.pld.parts import GaussianPart, LaplacePart, RandomizedResponsePart
from semidp.accountant.pld.refine import RefinedInterval, refine_bracket
from semidp.accountant.profiles.gaussian import gdp_epsilon

DELTA = 1e-10


def _median_time(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times = []
    out: object = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dpa-grid", type=float, default=1e-3, help="dp_accounting value_discretization_interval")
    ap.add_argument("--points", type=int, default=None, help="our grid-points target (default: the engine's)")
    args = ap.parse_args()
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld_lib
    except ImportError:  # pragma: no cover - optional dependency
        raise SystemExit("dp_accounting is not installed: pip install dp_accounting") from None

    print(
        f"epsilon at delta={DELTA:g}; dp_accounting grid {args.dpa_grid:g}; our points "
        f"{args.points or 'default'}; median of {args.repeat} runs"
    )
    hdr = (
        f"{'mech':4} {'scale':>5} {'k':>5} | {'ours lower':>12} {'ours upper':>12} {'width':>9} | "
        f"{'dp_acct':>12} {'up/dpa-1':>10} {'lo<=dpa':>7} | {'exact':>12} | "
        f"{'t_ours s':>9} {'t_dpa s':>9} {'dpa/ours':>8}"
    )
    print(hdr)
    print("-" * len(hdr))
    misses = 0
    for mech in ("gauss", "lap"):
        for scale in (0.5, 5.0, 50.0):
            for k in (1, 10, 200, 1000):
                part = GaussianPart(sigma=scale) if mech == "gauss" else LaplacePart(b=scale)

                def ours(part: GaussianPart | LaplacePart = part, k: int = k) -> PLDInterval:
                    return compose_plds([(part, k)], points=args.points).epsilon(DELTA)

                def dpa(scale: float = scale, k: int = k, mech: str = mech) -> float:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if mech == "gauss":
                            p = pld_lib.from_gaussian_mechanism(
                                scale, value_discretization_interval=args.dpa_grid, pessimistic_estimate=True
                            )
                        else:
                            p = pld_lib.from_laplace_mechanism(
                                scale, value_discretization_interval=args.dpa_grid, pessimistic_estimate=True
                            )
                        return float(p.self_compose(k).get_epsilon_for_delta(DELTA))

                t_o, res = _median_time(ours, args.repeat)
                t_d, ed = _median_time(dpa, args.repeat)
                assert isinstance(res, PLDInterval) and isinstance(ed, float)
                lo, up = res
                rel = up / ed - 1.0 if ed > 0 and math.isfinite(ed) else float("nan")
                exact = gdp_epsilon(math.sqrt(k) / scale, DELTA) if mech == "gauss" else float("nan")
                ok = rel <= 1e-3 and lo <= ed and math.isfinite(up) and t_o <= t_d
                misses += not ok
                print(
                    f"{mech:4} {scale:5g} {k:5d} | {lo:12.6f} {up:12.6f} {up - lo:9.2e} | "
                    f"{ed:12.6f} {rel:10.2e} {str(lo <= ed):>7} | {exact:12.6f} | "
                    f"{t_o:9.4f} {t_d:9.4f} {t_d / t_o:8.2f}{'' if ok else '  <- miss'}"
                )
    print(f"\n{misses} row(s) miss a target (eps ratio <= 1e-3, finite, lower <= dpa, not slower).")
    tight_ends(args.repeat)


#: Issue 26's cases: (label, parts, query kind, query value, bracket before the lattice lower end (main at
#: 39164fb, default grid, 0.01 s each), reference value and its source).
TIGHT_CASES: list[tuple[str, list[tuple[LaplacePart | RandomizedResponsePart, int]], str, float, str, str]] = [
    ("1000 Lap b=50 eps(1e-6)", [(LaplacePart(b=50.0), 1000)], "eps", 1e-6, "[2.4248, 2.90637]", "dpa 2.905400"),
    ("1000 Lap b=50 delta(2)", [(LaplacePart(b=50.0), 1000)], "delta", 2.0, "[1.93e-5, 3.3416e-4]", "dpa 3.32892e-4"),
    ("20000 RR 0.01 eps(1e-10)", [(RandomizedResponsePart(0.01), 20000)], "eps", 1e-10, "[0, 9.63788]", "9.6161175"),
    ("2 Lap b=1e-3 eps(1e-6)", [(LaplacePart(b=1e-3), 2)], "eps", 1e-6, "[0, 2000]", "~2000 (quadrature)"),
]


def tight_ends(repeat: int) -> None:
    """Issue 26 item 3: the lower end before (floored atoms) and now (atoms on their lattice), default grid, and
    :func:`refine_bracket` to relative width 1e-3; median wall times."""
    print("\nTight lower ends (issue 26): relative width (upper - lower) / upper and median time")
    hdr = (
        f"{'case':26} | {'before (main)':>22} | {'floored now':>9} | {'lattice [lower, upper]':>26} {'width':>8} "
        f"{'t s':>6} | {'refined width':>13} {'t s':>6} | reference"
    )
    print(hdr)
    print("-" * len(hdr))
    for label, parts, kind, value, before, ref in TIGHT_CASES:

        def run(
            lat: bool,
            parts: list[tuple[LaplacePart | RandomizedResponsePart, int]] = parts,
            kind: str = kind,
            value: float = value,
        ) -> PLDInterval:
            b = compose_plds(parts, lattice=lat)
            return b.epsilon(value) if kind == "eps" else b.delta(value)

        def refined_run(
            parts: list[tuple[LaplacePart | RandomizedResponsePart, int]] = parts,
            kind: str = kind,
            value: float = value,
        ) -> RefinedInterval:
            if kind == "eps":
                return refine_bracket(parts, delta=value)
            return refine_bracket(parts, epsilon=value)

        _, floored = _median_time(lambda: run(False), repeat)
        t_new, new = _median_time(lambda: run(True), repeat)
        t_ref, refined = _median_time(refined_run, repeat)
        assert isinstance(floored, PLDInterval) and isinstance(new, PLDInterval)
        assert isinstance(refined, RefinedInterval)

        def w(iv: PLDInterval) -> float:
            return (iv.upper - iv.lower) / iv.upper if iv.upper > 0 else 0.0

        print(
            f"{label:26} | {before:>22} | {w(floored):9.2e} | [{new.lower:.6g}, {new.upper:.6g}]".ljust(95)
            + f" {w(new):8.2e} {t_new:6.3f} | {refined.rel_width:13.2e} {t_ref:6.3f} | {ref}"
        )


if __name__ == "__main__":
    main()
