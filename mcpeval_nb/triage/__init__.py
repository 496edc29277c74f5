"""Findings (SPEC 12, 8.5), in two halves: ``index/`` builds ``<root>/index.db`` from the store, and the
modules here read it: ``rows`` (a finding declared once, at the bottom), ``groups`` and ``promote``
(scoring), ``scoring``, ``lifecycle``, ``findings`` (the readers), ``formats``, ``explain``, ``generate``,
``verify`` and ``export``.  Named ``triage`` so that ``mcpeval_nb.findings`` can be SPEC's function.
This package imports nothing: import its modules.
"""
