"""The package version, from the installed distribution's metadata (the bottom layer)."""

from __future__ import annotations

from importlib import metadata

__all__ = ["__version__"]

try:
    __version__: str = metadata.version("mcpeval-nb")
except metadata.PackageNotFoundError:  # pragma: no cover - a bare checkout on sys.path, not installed
    __version__ = "0+unknown"
