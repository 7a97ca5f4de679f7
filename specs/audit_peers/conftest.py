"""``pytest specs/`` (the spec plugin) audits the specs; it must not import these release functions as test
modules (``--doctest-modules``): they need the ``audit-peers`` extra."""

collect_ignore_glob = ["*_releases.py"]
