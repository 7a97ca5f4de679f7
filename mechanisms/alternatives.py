"""The alternative hypotheses of the private tests (one-sided greater/less, two-sided) and their
checking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from semidp.accountant.core.errors import InvalidArgument

Alternative = Literal["greater", "less", "two-sided"]
"""``"greater"``: H1 theta > theta0; ``"less"``: H1 theta < theta0; ``"two-sided"``: H1 theta != theta0."""


ALTERNATIVE_H1: dict[Alternative, str] = {
    "greater": "H1: theta > theta0",
    "less": "H1: theta < theta0",
    "two-sided": "H1: theta != theta0",
}


def check_alternative(alternative: object, notes: Mapping[Alternative, str] | None = None) -> Alternative:
    """``alternative`` as an :data:`Alternative`; ``notes`` add a remark to each choice in the error message."""
    for choice in ALTERNATIVE_H1:
        if alternative == choice:
            return choice
    described = [f"'{a}' ({h1}{'' if notes is None else '; ' + notes[a]})" for a, h1 in ALTERNATIVE_H1.items()]
    raise InvalidArgument(f"alternative={alternative!r} must be {described[0]}, {described[1]} or {described[2]}.")
