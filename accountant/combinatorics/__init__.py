"""Fibers of conforming histograms and the semi-adjacent parameter a(t) [CA24, Def. 13].

:mod:`~semidp.accountant.combinatorics.fiber` (the fiber ``D_t``),
:mod:`~semidp.accountant.combinatorics.semiadjacent` (closed forms and the labelled entry point),
:mod:`~semidp.accountant.combinatorics.semiadjacent_search` (exact search: graph, integer programming, brute
force; proof in ``semiadjacent_search.md``), :mod:`~semidp.accountant.combinatorics.record_multisets` (row
hashing). Layers: imports :mod:`~semidp.accountant.core`, :mod:`~semidp.accountant.data` and
:mod:`~semidp.accountant.guarantees` (relations).
"""
