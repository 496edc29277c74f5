"""The package version, read once from the installed distribution's metadata (the bottom layer).

Every version the package reports (``mcpeval-nb --version``, the probe report's generator, the MCP
``clientInfo`` and ``serverInfo``, a measurement profile's ``evaluator_version``, the OTLP scope) is this
one value.  A bare checkout on ``sys.path`` without an install reads ``0.0.0+unknown``: still a semantic
version, so a measurement profile stays valid.
"""

from __future__ import annotations

from importlib import metadata

__all__ = ["__version__"]

try:
    __version__: str = metadata.version("mcpeval-nb")
except metadata.PackageNotFoundError:  # pragma: no cover - a bare checkout on sys.path, not installed
    __version__ = "0.0.0+unknown"
