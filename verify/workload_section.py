"""The workload's geography as a registered section plugin: the loader and the runner call it, import it by no name.

A workload names geolevels in ``invariant.margins`` (``[data] geography``); the data space needs one stand-in
feature per geolevel (:func:`verify.workload_spec.with_geography_features`, idempotent), a geolevel may not
also be a feature name (:func:`~verify.workload_spec.clash_problems`), and a workload must state
``data.adjacency`` although the dataclass defaults it (:func:`~verify.workload_spec.omitted_key_problems`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from semidp.verify.registry import Problem, SectionDefaults
from semidp.verify.spec import Spec
from semidp.verify.workload_spec import clash_problems, omitted_key_problems, with_geography_features


class WorkloadSection(SectionDefaults):
    """The ``[data]`` geography of a workload (module docstring): prepared by the loader and the runner."""

    name = "workload"

    def raw_problems(self, raw: Mapping[str, Any], spec: Spec) -> list[Problem]:
        """Geolevels that are also feature names, and a workload's omitted ``data.adjacency``."""
        if spec.data is None:
            return []
        return clash_problems(spec) + omitted_key_problems(raw, spec)

    def prepare(self, spec: Spec) -> Spec:
        """The spec with one stand-in feature per geolevel (idempotent)."""
        return spec if spec.data is None else with_geography_features(spec)


WORKLOAD = WorkloadSection()
"""The workload section plugin (registered in :mod:`verify.kinds`)."""

__all__ = ["WORKLOAD", "WorkloadSection"]
