"""A pytest plugin (entry point ``pytest11``): spec files collected as tests, so ``pytest specs/`` works.

Installed with semidp. A ``*.toml`` file with a top-level ``version`` and ``[mechanism]`` table is
collected as one test item named after the spec; the item audits it (the same job and hard guard as
``semidp audit``) and fails, like ``semidp check``, when

* with ``--semidp-baseline FILE``: the spec regressed against its baseline entry
  (:mod:`verify.regression`);
* without a baseline: a claim is refuted or a check fails;
* always: the spec is invalid or cannot be evaluated.

The failure lists every check of the report as a sub-result (``[PASS]``/``[FAIL]``/``[SKIP]`` with its
detail). Options: ``--semidp-baseline FILE``, ``--semidp-time-limit SECONDS`` (default 60),
``--semidp-seed N``, ``--semidp-allow-code`` (specs may run the code they name). Messages name these
options, not the command line's (``--allow-code`` reads ``--semidp-allow-code`` here). A missing or
invalid baseline fails every item with the reason. Importing this module is cheap: the toolkit is
imported only when a spec is collected.
"""

from __future__ import annotations

import argparse
import math
import re
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

#: Command-line options as the plugin spells them (the toolkit's messages name the ``semidp`` CLI's).
_OPTION_NAMES = {
    "--allow-code": "--semidp-allow-code",
    "--seed": "--semidp-seed",
    "--time-limit": "--semidp-time-limit",
}
_CLI_OPTION = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, _OPTION_NAMES)) + r")(?![\w-])")


def plugin_wording(text: str) -> str:
    """``text`` with the ``semidp`` CLI's option names replaced by the plugin's (``--allow-code`` ->
    ``--semidp-allow-code``), so a message names the option of the interface in use."""
    return _CLI_OPTION.sub(lambda m: _OPTION_NAMES[m.group(1)], text)


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's command-line options."""
    group = parser.getgroup("semidp", "semidp privacy regression tests (spec files as tests)")
    group.addoption("--semidp-baseline", metavar="FILE", help="compare every spec with this baseline")
    group.addoption("--semidp-time-limit", type=_seconds, default=60.0, metavar="SECONDS", help="budget per spec")
    group.addoption("--semidp-seed", type=_seed, default=None, metavar="N", help="seed of sampling-based checks")
    group.addoption("--semidp-allow-code", action="store_true", help="specs may import the code they name")
    group.addoption("--semidp-files-root", metavar="DIR", help="files named by specs may lie anywhere under DIR")


def _seconds(text: str) -> float:
    """``--semidp-time-limit``: a finite number of seconds > 0 (as the CLI's ``--time-limit``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (0 < value < math.inf):
        raise argparse.ArgumentTypeError(f"{text} must be a finite number of seconds > 0")
    return value


def _seed(text: str) -> int:
    """``--semidp-seed``: an integer >= 0 (as the CLI's ``--seed``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative; a seed is an integer >= 0")
    return value


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A semidp spec file becomes a :class:`SpecFile`."""
    if file_path.suffix != ".toml" or file_path.name == "pyproject.toml" or not _looks_like_spec(file_path):
        return None
    spec_file: SpecFile = SpecFile.from_parent(parent, path=file_path)
    return spec_file


def _looks_like_spec(path: Path) -> bool:
    if not path.is_file():  # a FIFO or a device named *.toml: never opened (opening a FIFO blocks)
        return False
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return "version" in data and isinstance(data.get("mechanism"), dict)


class SpecFile(pytest.File):
    """A spec file: one item."""

    def collect(self) -> list[pytest.Item]:
        """The spec's single test item."""
        return [SpecItem.from_parent(self, name=self.path.stem)]


class SpecFailure(Exception):
    """A spec's test failed: the case (regressions or failed checks) and its sub-results."""

    def __init__(self, message: str, details: str) -> None:
        super().__init__(message)
        self.message, self.details = message, details


class SpecItem(pytest.Item):
    """Audits one spec and judges it like ``semidp check``."""

    def runtest(self) -> None:
        """Audit, then fail on a regression, a refuted claim (no baseline) or an invalid spec."""
        from semidp.verify.check_command import judge
        from semidp.verify.regression import InvalidBaseline, load_baseline, spec_key
        from semidp.verify.run_options import RunOptions
        from semidp.verify.spec_job import JobOptions, run_spec

        cfg = self.config
        opts = JobOptions(
            seed=cfg.getoption("--semidp-seed"),
            time_limit=cfg.getoption("--semidp-time-limit"),
            run=RunOptions(allow_code=bool(cfg.getoption("--semidp-allow-code"))),
            files_root=cfg.getoption("--semidp-files-root"),
        )
        baseline_opt = cfg.getoption("--semidp-baseline")
        base: dict[str, Any] | None = None
        key = str(self.path)
        if baseline_opt:
            baseline_path = Path(baseline_opt)
            key = spec_key(self.path, baseline_path)
            try:
                base = load_baseline(baseline_path, option="--semidp-baseline").get(key)
            except InvalidBaseline as e:
                raise SpecFailure(str(e), "\n".join(e.problems[1:])) from None
        t0 = time.monotonic()
        got = run_spec(str(self.path), opts)
        case = judge(key, got, base, seconds=time.monotonic() - t0)
        self.user_properties.append(("semidp", plugin_wording(case.message)))
        if case.result in ("failed", "error"):
            subs = ""
            if got.value is not None:
                subs = "\n".join(
                    f"  [{c['status'].upper()}] {c['name']}: {c['detail']}" for c in got.value.to_json()["checks"]
                )
            details = "\n".join(x for x in (case.details, "checks:\n" + subs if subs else "") if x)
            raise SpecFailure(plugin_wording(case.message), plugin_wording(details))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """The case's message, then the regressions and every check as a sub-result."""
        if isinstance(excinfo.value, SpecFailure):
            return f"{self.path}: {excinfo.value.message}\n{excinfo.value.details}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        """Where the item comes from (for pytest's report)."""
        return self.path, 0, f"semidp spec {self.name}"


__all__ = ["SpecFailure", "SpecFile", "SpecItem", "plugin_wording", "pytest_addoption", "pytest_collect_file"]
