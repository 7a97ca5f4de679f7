"""K-norm balls of sensitivity spaces: the optimal ball conv(S), its certificates, and cheaper balls.

:mod:`~semidp.accountant.geometry.knorm` (the optimal ball; its docstring maps the family),
``knorm_certificates``, ``knorm_cache``, ``knorm_verify``, ``lp_balls``, ``containing_ball``,
``root_polytope`` (2 x c tables in closed form), the fans ``face_fan`` and ``symmetric_fan``,
``table_symmetry``, ``table_space_norms`` and ``span_coordinates``. Layers: imports
:mod:`~semidp.accountant.core`, :mod:`~semidp.accountant.data`, :mod:`~semidp.accountant.guarantees` and
:mod:`~semidp.accountant.sensitivity`.
"""
