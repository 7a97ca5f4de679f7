"""Sensitivity spaces [CA24, Def. 4, Sec. 4; AS21], closed forms and exact Semi-DP searches.

* :mod:`~semidp.accountant.sensitivity.spaces` -- :class:`SensitivitySpace` and the closed-form spaces of
  tables and histograms;
* :mod:`~semidp.accountant.sensitivity.search` -- exact Semi-DP sensitivity spaces by enumeration, with
  :mod:`~semidp.accountant.sensitivity.kernel_moves` (candidate difference vectors),
  :mod:`~semidp.accountant.sensitivity.realise` (which candidates conforming datasets realise) and
  :mod:`~semidp.accountant.sensitivity.results` (the results they share);
* :mod:`~semidp.accountant.sensitivity.comparisons` -- the exact space against the naive spaces and the
  printed closed form [CA24, Prop. 24, Prop. 32].

Layers: imports :mod:`~semidp.accountant.core`, :mod:`~semidp.accountant.data` and
:mod:`~semidp.accountant.combinatorics`. The names of :mod:`~semidp.accountant.sensitivity.spaces` are
re-exported here (``semidp.accountant.sensitivity`` was that module before the subpackages).
"""

from semidp.accountant.sensitivity.spaces import (
    TABLE_SPACE_LIMIT,
    SensitivitySpace,
    exact_rank,
    group_inflated,
    histogram_space,
    table_moves,
    table_projector_kron,
    table_space,
    table_three_cycles,
)

__all__ = [
    "TABLE_SPACE_LIMIT",
    "SensitivitySpace",
    "exact_rank",
    "group_inflated",
    "histogram_space",
    "table_moves",
    "table_projector_kron",
    "table_space",
    "table_three_cycles",
]
