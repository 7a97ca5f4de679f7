"""Reproduce Cho & Awan 2024 §5.2 (Figs 2-3): L2 cost of Semi-DP releases of k x k tables with one-way margins.

Reference: ``docs/reference/semi-dp.md`` §5.1 (setup) and §9 (T-G1, T-K1, T-E1..T-E4).
Data: x ~ Multinomial(n, pi) over the k^2 cells (row-major), pi uniform (1/k^2) or linear
(pi_l proportional to l); all one-way margins invariant; a(t) = 3 (worst case). Cost = ||x~ - x||_2.

Printed in one run, side by side:

1. Gaussian (Fig 2), mu = 0.1: ours with the exact S (moves + 3-cycles; Delta_2 = sqrt 6 for k >= 3),
   ours with Prop 32 as printed (moves only, Delta_2 = 2: NOT Semi-DP for k >= 3) and the naive
   (3 sqrt 2 / mu) Z in R^{k^2}; Monte Carlo over ``--reps`` replicates, without clamping and with the
   paper's clamping at 0, next to the analytic expectation (T-G1) and the authors' averages (T-E1/T-E2).
2. K-norm (Fig 3), eps in {0.1, 0.5, 1}: optimal K-norm (Alg 2, exact fan sampler, Gamma shape s+1)
   for the exact S and for Prop 32's moves, projected Laplace calibrated to Delta_1(S) (keeps the margins;
   mechanisms.semi_additive), naive l1 / l2 / l_inf K-norms at eps/3 (group privacy),
   reported as eps * E||noise||_2 with a high-draw reference and T-K1; where the hull is refused, the
   exact NON-OPTIMAL containing ball (labelled).
3. Throughput: exact optimal sampler vs cube rejection (Alg 3), releases per second, with the ratio.
4. PNGs of (1) and (2) in ``--out``.

Run: ``python benchmarks/semi_dp_tables.py [--reps 30 --n 500 --kmax 10 --seed 2024 --out DIR]``.
A benchmark: timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import SearchTooLarge
from semidp.accountant.data.invariants import Margins
from semidp.accountant.geometry.containing_ball import ContainingBall, containing_ball
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_certificates import certified_span
from semidp.accountant.geometry.table_symmetry import TableSymmetry
from semidp.accountant.guarantees.relations import Replace, SemiAdjacent
from semidp.accountant.sensitivity.spaces import SensitivitySpace, table_space
from semidp.mechanisms.knorm import CubeRejectionSampler, KNormMechanism
from semidp.mechanisms.projected_gaussian import ProjectedGaussianMechanism, expected_chi
from semidp.mechanisms.semi_additive import SemiLaplaceMechanism

FloatArray = NDArray[np.float64]

MU = 0.1
EPSILONS = (0.1, 0.5, 1.0)
RADIUS = 3  # a(t) = 3 (worst case, Thm 16 with p = 2)
REL = SemiAdjacent(Replace(), Margins((("row",), ("col",))), RADIUS)

# Reference §9 (T-G1 analytic; T-E1/T-E2 authors' clamped averages, k = 2..10).
TG1_PROP32 = [15.958, 37.599, 58.360, 78.761, 99.005, 119.170, 139.288, 159.376, 179.445]
TG1_EXACT = [15.958, 46.050, 71.476, 96.462, 121.256, 145.952, 170.592, 195.195, 219.775]
TG1_NAIVE = [79.760, 123.799, 167.076, 210.022, 252.797, 295.474, 338.088, 380.661, 423.205]
TE_OURS = {
    "uniform": [14.40, 42.34, 56.71, 69.96, 85.18, 95.84, 106.78, 118.01, 131.05],
    "linear": [15.96, 41.28, 50.77, 70.15, 84.88, 96.40, 107.47, 118.87, 131.87],
}
TE_NAIVE = {
    "uniform": [84.82, 111.29, 134.26, 162.45, 193.48, 209.93, 244.74, 285.64, 310.47],
    "linear": [81.43, 104.19, 143.62, 164.27, 194.07, 211.47, 245.59, 286.30, 311.01],
}
# T-K1, eps * E||noise||_2, "correct" column (shape s+1 / d+1); 3x3 optimal: reference 6.05, our exact 6.10.
TK1 = {
    2: {"opt": 2.000, "l1": 15.06, "l2": 16.97, "linf": 16.82, "linf_code": 13.46},
    3: {"opt": 6.05, "l1": 24.00, "l2": 38.18, "linf": 51.37, "linf_code": 46.23},
}


# ----------------------------------------------------------------------------------------------- helpers

_SPACES: dict[tuple[int, bool], SensitivitySpace] = {}


def space(k: int, paper_exact: bool) -> SensitivitySpace:
    """table_space(k, k) (exact S) or Prop 32's moves (paper_exact), cached; identical for k = 2."""
    key = (k, paper_exact if k >= 3 else True)
    if key not in _SPACES:
        _SPACES[key] = table_space(k, k, RADIUS, paper_exact=key[1])
    return _SPACES[key]


def pi_model(model: str, k: int) -> FloatArray:
    d = k * k
    if model == "uniform":
        return np.full(d, 1.0 / d)
    w = np.arange(1, d + 1, dtype=np.float64)
    return w / w.sum()


def mean_se(v: FloatArray) -> tuple[float, float]:
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else float("nan")


def mc_mean(draw: Callable[[int], FloatArray], draws: int, chunk: int = 20_000) -> tuple[float, float]:
    """Mean and standard error of draw(m) values (1-d arrays), in chunks to bound memory."""
    parts = [draw(min(chunk, draws - i)) for i in range(0, draws, chunk)]
    return mean_se(np.concatenate(parts))


def fmt(x: float, nd: int = 2) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.{nd}f}"


def pm(m: float, se: float, nd: int = 2) -> str:
    return f"{m:.{nd}f}±{se:.{nd}f}"


def table(header: list[str], rows: list[list[str]]) -> None:
    w = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    print("  ".join(h.rjust(x) for h, x in zip(header, w)))
    for r in rows:
        print("  ".join(c.rjust(x) for c, x in zip(r, w)), flush=True)


# ----------------------------------------------------------------------------------------------- 1. Gaussian


@dataclass
class GaussRow:
    k: int
    exact: tuple[float, float, float]  # MC no clamp, MC clamp, analytic
    prop32: tuple[float, float, float]
    naive: tuple[float, float, float]


def gaussian_section(
    ks: list[int], reps: int, n: int, rng: np.random.Generator, skipped: list[str]
) -> dict[str, list[GaussRow]]:
    print(f"\n## 1. Gaussian (Fig 2): mu = {MU}, n = {n}, {reps} replicates; mean L2 cost ||x~ - x||_2")
    print("   MC = Monte Carlo mean over replicates, no clamping; clamp = same draws with the paper's pmax(x~, 0);")
    print("   E = analytic expectation (Delta/mu) E chi_s (T-G1, no clamping); authors = T-E1/T-E2 (clamped).")
    print("   exact S: moves + 3-cycles, Delta_2 = sqrt 6 (k >= 3), 2 (k = 2), s = (k-1)^2, Semi-DP (mu-GDP on A_3).")
    print("   Prop 32: moves only, Delta_2 = 2 -- NOT Semi-DP for k >= 3 (only G_{mu sqrt6/2} on 3-cycle pairs).")
    print("   naive: x + (3 sqrt2 / mu) Z, Z ~ N(0, I_{k^2}) (mu-GDP by group privacy; breaks the margins).")
    out: dict[str, list[GaussRow]] = {}
    mechs: dict[tuple[int, bool], ProjectedGaussianMechanism] = {}
    for k in ks:
        for pe in (False, True):
            try:
                mechs[(k, pe)] = ProjectedGaussianMechanism.for_gdp(space(k, pe), MU, REL)
            except (SearchTooLarge, MemoryError) as e:  # pragma: no cover - defensive
                skipped.append(f"Gaussian k={k} {'Prop 32' if pe else 'exact S'}: {e}")
    for model in ("uniform", "linear"):
        print(f"\n### model: {model} (pi_l {'= 1/k^2' if model == 'uniform' else 'proportional to l, row-major'})")
        rows: list[GaussRow] = []
        cells: list[list[str]] = []
        for k in ks:
            d = k * k
            x = rng.multinomial(n, pi_model(model, k), size=reps).astype(np.float64)  # (reps, d)

            def costs(noise: FloatArray, x: FloatArray = x) -> tuple[float, float]:
                y = x + noise
                return (
                    float(np.linalg.norm(noise, axis=1).mean()),
                    float(np.linalg.norm(np.maximum(y, 0.0) - x, axis=1).mean()),
                )

            res: dict[str, tuple[float, float, float]] = {}
            for name, pe in (("exact", False), ("prop32", True)):
                m = mechs.get((k, pe))
                if m is None:
                    res[name] = (float("nan"),) * 3
                    continue
                noise = m.sample(np.zeros(d), rng=rng, size=reps)
                res[name] = (*costs(noise), m.expected_l2_norm())
            sig = 3 * math.sqrt(2) / MU
            res["naive"] = (*costs(sig * rng.standard_normal((reps, d))), sig * expected_chi(d))
            rows.append(GaussRow(k, res["exact"], res["prop32"], res["naive"]))
            i = k - 2
            te_o = TE_OURS[model][i] if 0 <= i < 9 else float("nan")
            te_n = TE_NAIVE[model][i] if 0 <= i < 9 else float("nan")
            d2 = mechs[(k, False)].sensitivity if (k, False) in mechs else float("nan")
            cells.append(
                [
                    f"{k}x{k}",
                    str((k - 1) ** 2),
                    f"{d2:.4f}",
                    *(fmt(v) for v in res["exact"]),
                    *(fmt(v) for v in res["prop32"]),
                    fmt(te_o),
                    *(fmt(v) for v in res["naive"]),
                    fmt(te_n),
                    f"{res['exact'][2] / res['naive'][2]:.3f}",
                ]
            )
        table(
            [
                "k",
                "s",
                "D2(exact)",
                "exactS MC",
                "exactS clamp",
                "exactS E",
                "Prop32 MC",
                "Prop32 clamp",
                "Prop32 E",
                "authors ours clamp",
                "naive MC",
                "naive clamp",
                "naive E",
                "authors naive clamp",
                "E exactS/naive",
            ],
            cells,
        )
        out[model] = rows
    print(
        "   (Prop 32 columns for k >= 3: NOT Semi-DP. T-G1 values: Prop32 E must match "
        f"{TG1_PROP32[:3]}..., exact S {TG1_EXACT[:3]}..., naive {TG1_NAIVE[:3]}...)"
    )
    return out


# ----------------------------------------------------------------------------------------------- 2. K-norm


@dataclass
class BallInfo:
    ball: KNormBall | ContainingBall
    optimal: bool
    build_s: float
    note: str


_BALLS: dict[tuple[int, bool], BallInfo] = {}


def ball_for(k: int, paper_exact: bool, hull_time: float) -> BallInfo:
    key = (k, paper_exact if k >= 3 else True)
    if key in _BALLS:
        return _BALLS[key]
    sp = space(k, key[1])
    t = time.perf_counter()
    try:
        b: KNormBall | ContainingBall = KNormBall.from_space(
            sp, relation=REL, symmetry=TableSymmetry(k, k), budget=Budget.of(hull_time)
        )
        info = BallInfo(b, True, time.perf_counter() - t, f"hull: {b.facet_count} facets")
    except SearchTooLarge as e:
        why = str(e).split(". ")[0]
        t = time.perf_counter()
        fb = containing_ball(sp, relation=REL)
        info = BallInfo(
            fb,
            False,
            time.perf_counter() - t,
            f"hull refused ({why}); fallback {fb.kind}: exact, NON-OPTIMAL, "
            f"E||noise||_2 <= {fb.loss.norm_ratio_upper:.3g} x optimal",
        )
    _BALLS[key] = info
    return info


NAIVE = ("l1", "l2", "linf", "linf_code")


def naive_noise(kind: str, d: int, eps: float, m: int, rng: np.random.Generator) -> FloatArray:
    """Cho & Awan §5.2 naive K-norms at eps/3 on the standard-DP space {e_a - e_b} (group privacy x3)."""
    if kind == "l1":  # iid Laplace, scale 3 * Delta_1 / eps
        return rng.laplace(scale=3 * 2 / eps, size=(m, d))
    if kind == "l2":  # Gamma(d) x uniform direction
        z = rng.standard_normal((m, d))
        r = rng.gamma(shape=d, scale=3 * math.sqrt(2) / eps, size=m)
        return np.asarray(r[:, None] * z / np.linalg.norm(z, axis=1, keepdims=True))
    shape = d + 1 if kind == "linf" else d  # correct d+1; authors' code d
    r = rng.gamma(shape=shape, scale=3.0 / eps, size=m)
    return np.asarray(r[:, None] * rng.uniform(-1.0, 1.0, (m, d)))


def naive_reference(kind: str, d: int, draws: int, rng: np.random.Generator) -> tuple[float, float]:
    """eps * E||noise||_2 (eps-free): analytic for l2, else Monte Carlo (mean, s.e.)."""
    if kind == "l2":
        return 3 * math.sqrt(2) * d, 0.0
    if kind == "l1":
        return mc_mean(lambda m: 6.0 * np.linalg.norm(rng.laplace(size=(m, d)), axis=1), draws)
    mu, se = mc_mean(lambda m: np.linalg.norm(rng.uniform(-1.0, 1.0, (m, d)), axis=1), draws)
    c = 3.0 * (d + 1 if kind == "linf" else d)
    return c * mu, c * se


@dataclass
class KRow:
    k: int
    ref: dict[str, float]  # eps * E||noise||_2 per mechanism
    mc: dict[float, dict[str, float]]  # eps -> mechanism -> MC mean cost (not scaled)
    optimal: dict[str, bool]


def knorm_section(
    ks: list[int], reps: int, n: int, draws: int, hull_time: float, rng: np.random.Generator, skipped: list[str]
) -> list[KRow]:
    print(
        f"\n## 2. K-norm (Fig 3): eps in {list(EPSILONS)}; eps * mean ||noise||_2 (no clamping; eps-free in "
        "expectation)"
    )
    print(
        f"   MC(eps) = eps x mean over {reps} replicates ± s.e. (uniform-model data, n = {n}; the cost does not "
        "depend on x)"
    )
    print(
        f"   ref = eps x E||noise||_2: analytic (l2; 2x2 optimal = 2) or Monte Carlo with {draws} draws "
        "(± s.e.); T-K1 = reference 'correct' column."
    )
    print(
        "   optimal = Alg 2, exact fan sampler, R ~ Gamma(s+1, eps), Delta_K = 1 (Thm 31); exactS = moves + "
        "3-cycles (Semi-DP); Prop32 = moves only (NOT Semi-DP for k >= 3)."
    )
    print(
        "   naive (eps/3 on {e_a - e_b}, x3 by group privacy): l1 iid Laplace(6/eps); l2 Gamma(k^2, eps/(3 sqrt2)) x "
        "direction; linf Gamma(k^2+1, eps/3) x cube (correct); linf(code) shape k^2 as the authors' code "
        "(NOT eps-DP)."
    )
    rows: list[KRow] = []
    names = ("exactS", "prop32", "projL1", *NAIVE)
    for k in ks:
        d = k * k
        ref: dict[str, float] = {}
        ref_se: dict[str, float] = {}
        opt: dict[str, bool] = {}
        notes: list[str] = []
        infos: dict[str, BallInfo] = {}
        for name, pe in (("exactS", False), ("prop32", True)):
            info = ball_for(k, pe, hull_time)
            infos[name] = info
            opt[name] = info.optimal
            notes.append(f"{name}: {info.note} (build {info.build_s:.3g}s)")
            if k == 2:
                ref[name], ref_se[name] = 2.0, 0.0  # Laplace on (1,-1,-1,1): 2 E|L| = 2/eps
            else:
                b = KNormMechanism(info.ball, 1.0).expected_l2_norm_mc(rng=rng, draws=draws, level=0.6827)
                ref[name], ref_se[name] = b.estimate, (b.upper - b.lower) / 2
        for kind in NAIVE:
            ref[kind], ref_se[kind] = naive_reference(kind, d, draws, rng)
        proj = SemiLaplaceMechanism.for_epsilon(space(k, False), 1.0, REL, projected=True)
        ref["projL1"], ref_se["projL1"] = mc_mean(
            lambda m, proj=proj, d=d: np.linalg.norm(proj.sample(np.zeros(d), rng=rng, size=m), axis=1), draws
        )
        mc: dict[float, dict[str, float]] = {}
        cells: list[list[str]] = []
        for eps in EPSILONS:
            mc[eps] = {}
            row = [f"MC eps={eps}"]
            for name in names:
                if name in ("exactS", "prop32"):
                    noise = KNormMechanism(infos[name].ball, eps).sample(np.zeros(d), rng=rng, size=reps)
                elif name == "projL1":
                    noise = SemiLaplaceMechanism.for_epsilon(space(k, False), eps, REL, projected=True).sample(
                        np.zeros(d), rng=rng, size=reps
                    )
                else:
                    noise = naive_noise(name, d, eps, reps, rng)
                c = np.linalg.norm(noise, axis=1)
                mc[eps][name] = float(c.mean())
                row.append(pm(*mean_se(eps * c)))
            cells.append(row)
        cells.append(["ref eps*E"] + [pm(ref[x], ref_se[x], 3) for x in names])
        if k in TK1:
            t = TK1[k]
            # T-K1's optimal value is for the basic (moves-only) hull: it belongs under Prop32 (and exact S at 2x2).
            cells.append(
                [
                    "T-K1 (correct)",
                    f"{t['opt']:.3f}" if k == 2 else "- (basic hull only)",
                    f"{t['opt']:.3f}",
                    "-",
                    *(f"{t[x]:.2f}" for x in NAIVE),
                ]
            )
        lab = {x: ("optimal" if opt[x] else "FALLBACK non-opt") for x in ("exactS", "prop32")}
        if k >= 3:
            lab["prop32"] += ", NOT Semi-DP"
        print(f"\n### {k}x{k} (s = {(k - 1) ** 2}, d = {d})")
        if k == 3:
            print(
                "   (T-K1 prints 6.05 for the 3x3 basic hull; our exact fan sampler gives the Prop32 ref below, ~6.10)"
            )
        table(
            [
                "",
                f"exactS [{lab['exactS']}]",
                f"Prop32 [{lab['prop32']}]",
                "proj. Laplace (exact S)",
                "naive l1",
                "naive l2",
                "naive linf",
                "naive linf(code)",
            ],
            cells,
        )
        best_naive = min(ref[x] for x in ("l1", "l2", "linf"))
        verdict = "beats" if ref["exactS"] < best_naive else "does NOT beat"
        kind_s = "optimal K-norm" if opt["exactS"] else "fallback (non-optimal) K-norm"
        print(
            f"   exact-S {kind_s} {verdict} every naive alternative: ref {ref['exactS']:.3f} vs best naive "
            f"{best_naive:.3f} (ratio {ref['exactS'] / best_naive:.3f})"
        )
        if not opt["exactS"]:  # what `semidp audit` uses for kind = "k-norm" here: the better exact fallback
            ours = min(ref["exactS"], ref["projL1"])
            which = "projected Laplace" if ref["projL1"] < ref["exactS"] else "containing ball"
            print(
                f"   semidp's k-norm fallback ({which}) {'beats' if ours < best_naive else 'does NOT beat'} every "
                f"naive alternative: {ours:.3f} vs {best_naive:.3f} (ratio {ours / best_naive:.3f})"
            )
        if ref["projL1"] < ref["exactS"]:
            print(
                f"   projected Laplace on the exact S (Delta_1(S)/eps, keeps the margins, eps-DP on (D_t, A_3)) "
                f"has lower error than the exact-S K-norm here: {ref['projL1']:.3f} vs {ref['exactS']:.3f}"
                + ("" if opt["exactS"] else " (the K-norm is the non-optimal fallback)")
            )
        for note in notes:
            print("   " + note)
        if not opt["exactS"] or not opt["prop32"]:
            skipped.append(
                f"K-norm {k}x{k}: optimal hull refused for "
                f"{', '.join(x for x in ('exactS', 'prop32') if not opt[x])}; used the labelled "
                "non-optimal containing ball"
            )
        rows.append(KRow(k, ref, mc, opt))
    return rows


# ----------------------------------------------------------------------------------------------- 3. throughput


def throughput_section(cases: list[int], hull_time: float, rng: np.random.Generator, skipped: list[str]) -> None:
    print("\n## 3. Throughput: K-norm releases/s (x + Q R U), exact sampler vs cube rejection (Alg 3), eps = 1")
    print("   cube: proposals B z, z ~ U[-1,1]^s (B = certified lattice basis of moves), accepted by the hull's facets")
    print(
        "   (i.e. given the hull; the paper's one-LP-per-proposal membership is slower still). acceptance = "
        "vol(conv S)/vol(cube), exact."
    )
    cells: list[list[str]] = []
    for k in cases:
        for name, pe in (("exactS", False), ("prop32", True)):
            info = ball_for(k, pe, hull_time)
            sp = space(k, pe)
            x = np.zeros(k * k)
            mech = KNormMechanism(info.ball, 1.0)
            mech.sample(x, rng=rng, size=1000)
            n_ex = 200_000
            t = time.perf_counter()
            mech.sample(x, rng=rng, size=n_ex)
            ex = n_ex / (time.perf_counter() - t)
            label = f"{k}x{k} {name}"
            if not info.optimal:
                cells.append([label, "fallback (NON-OPTIMAL)", f"{ex:.3g}", "-", "-", "-", "-"])
                skipped.append(
                    f"throughput {label}: hull refused, so no cube rejection (membership needs the hull "
                    "or one LP per proposal; acceptance unknown)"
                )
                continue
            assert isinstance(info.ball, KNormBall)
            cube = CubeRejectionSampler(sp, certified_span(sp).basis, 1.0, ball=info.ball)
            acc = cube.expected_acceptance
            want = int(min(50_000, max(30, acc * 4e5)))
            t = time.perf_counter()
            cube.sample(x, rng=rng, size=want)
            cr = want / (time.perf_counter() - t)
            cells.append([label, "optimal", f"{ex:.3g}", f"{acc:.3g}", f"{cr:.3g}", str(want), f"{ex / cr:.3g}x"])
    table(
        ["case", "ball", "exact releases/s", "cube acceptance", "cube releases/s", "cube draws timed", "exact/cube"],
        cells,
    )


# ----------------------------------------------------------------------------------------------- 4. plots


def plots(gauss: dict[str, list[GaussRow]], kn: list[KRow], out: Path, skipped: list[str]) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - optional
        skipped.append(f"PNGs: matplotlib unavailable ({e})")
        return []
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, (model, rows) in zip(axes, gauss.items()):
        ks = [r.k for r in rows]
        for attr, lab, col in (
            ("exact", "ours, exact S (Semi-DP)", "C0"),
            ("prop32", "ours, Prop 32 (NOT Semi-DP k>=3)", "C1"),
            ("naive", "naive 3√2/μ Z", "C3"),
        ):
            v = [getattr(r, attr) for r in rows]
            ax.plot(ks, [t[2] for t in v], "-", color=col, label=f"{lab}: E (T-G1)")
            ax.plot(ks, [t[0] for t in v], "o", color=col, label=f"{lab}: MC")
            ax.plot(ks, [t[1] for t in v], "x--", color=col, alpha=0.6, label=f"{lab}: MC clamped at 0")
        ax.set_title(f"Gaussian μ={MU}, {model} model")
        ax.set_xlabel("k (k×k table)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean L2 cost ‖x̃−x‖₂")
    axes[1].legend(fontsize=6.5, loc="upper left")
    fig.tight_layout()
    p = out / "fig2_gaussian_l2_cost.png"
    fig.savefig(p, dpi=120)
    plt.close(fig)
    paths.append(p)

    fig, axes = plt.subplots(1, len(EPSILONS), figsize=(14, 4.2), sharey=False)
    ks = [r.k for r in kn]
    styles = {
        "exactS": ("C0", "optimal K, exact S"),
        "prop32": ("C1", "optimal K, Prop 32 (NOT Semi-DP k>=3)"),
        "projL1": ("C5", "projected Laplace, exact S"),
        "l1": ("C2", "naive ℓ1"),
        "l2": ("C3", "naive ℓ2"),
        "linf": ("C4", "naive ℓ∞ (shape k²+1)"),
    }
    for ax, eps in zip(axes, EPSILONS):
        for name, (col, lab) in styles.items():
            ax.plot(ks, [r.ref[name] / eps for r in kn], "-", color=col, label=f"{lab}: E")
            ax.plot(ks, [r.mc[eps][name] for r in kn], "o", color=col, ms=4)
            fb = [r.k for r in kn if name in r.optimal and not r.optimal[name]]
            if fb:
                ax.plot(fb, [r.ref[name] / eps for r in kn if r.k in fb], "s", mfc="none", color=col, ms=9)
        ax.set_yscale("log")
        ax.set_title(f"K-norm ε={eps} (dots: MC; open squares: non-optimal fallback)", fontsize=9)
        ax.set_xlabel("k (k×k table)")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("mean L2 cost ‖noise‖₂")
    axes[-1].legend(fontsize=6.5)
    fig.tight_layout()
    p = out / "fig3_knorm_l2_cost.png"
    fig.savefig(p, dpi=120)
    plt.close(fig)
    paths.append(p)
    return paths


# ----------------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=30, help="replicates per cell (paper: 30)")
    ap.add_argument("--n", type=int, default=500, help="multinomial sample size (paper: 500)")
    ap.add_argument(
        "--kmax", type=int, default=10, help="largest k for the k x k tables (paper: 10 Gaussian, 3 K-norm)"
    )
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--out", type=Path, default=None, help="directory for the PNGs (default: a new temp dir)")
    ap.add_argument("--ref-draws", type=int, default=200_000, help="Monte Carlo draws for the eps*E references")
    ap.add_argument("--hull-time", type=float, default=30.0, help="time limit (s) per optimal hull build")
    args = ap.parse_args(argv)
    if args.reps < 2 or args.n < 1 or args.kmax < 2:
        ap.error("need --reps >= 2, --n >= 1, --kmax >= 2")
    out = args.out if args.out is not None else Path(tempfile.mkdtemp(prefix="semi_dp_tables_"))
    t0 = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    skipped: list[str] = []
    print(
        f"# Cho & Awan §5.2 reproduction, k x k tables with one-way margins, a(t) = {RADIUS}; seed={args.seed}, "
        f"reps={args.reps}, n={args.n}, kmax={args.kmax}"
    )
    print(f"# {platform.machine()}, python {platform.python_version()}, numpy {np.__version__}")
    ks = list(range(2, args.kmax + 1))
    t = time.perf_counter()
    gauss = gaussian_section(ks, args.reps, args.n, rng, skipped)
    print(f"   [section 1: {time.perf_counter() - t:.1f}s]")
    t = time.perf_counter()
    kn = knorm_section(ks, args.reps, args.n, args.ref_draws, args.hull_time, rng, skipped)
    print(f"\n   [section 2: {time.perf_counter() - t:.1f}s]")
    t = time.perf_counter()
    throughput_section([k for k in (3, 4, 5, 6) if k <= max(args.kmax, 4)], args.hull_time, rng, skipped)
    print(f"   [section 3: {time.perf_counter() - t:.1f}s]")
    paths = plots(gauss, kn, out, skipped)
    print("\n## 4. PNGs")
    for p in paths:
        print(f"   wrote {p}")
    if skipped:
        print("\n## skipped / degraded (and why)")
        for s in skipped:
            print("   - " + s)
    print(f"\n# total runtime {time.perf_counter() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
