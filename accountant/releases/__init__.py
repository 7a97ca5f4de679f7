"""A release as data [R3]: its parts (noise law, scale, the query's shift on each relation's worst
pair) or a black box, and the interpreters that account it (zCDP sum, PLD parts, Semi-DP grouping under the
invariant, the statistical audit's lower bound) and search its scale; a measurement workload described as a
release (:mod:`~semidp.accountant.releases.workload`)."""
