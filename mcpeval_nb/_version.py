"""The package version: the one place it is written (``pyproject.toml`` reads it from here at build time).

A constant rather than ``importlib.metadata.version(...)``: reading the installed distribution's metadata
costs about 0.3 s of imports, and ``mcpeval-nb shim`` sits in front of every server start
(``bench/bench_startup.py``).  ``tests/test_startup.py`` checks it agrees with the installed metadata.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__: str = "0.1.0"
