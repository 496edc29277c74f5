"""Benchmarks, each a ``bench_<area>.py`` module with a ``main()``; ``python -m bench`` runs them all.

Figures depend on the machine and its load: every module measures its subject side by side with a
baseline (a plain ``cat``, a naive client ...) in the same run and reports the ratio.
"""
