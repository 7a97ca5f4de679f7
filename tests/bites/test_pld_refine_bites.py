"""Fast bites for :mod:`semidp.accountant.pld_refine` (mutation testing, issue Step 16)."""
