"""Optional engines: import one, or say which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import MissingExtra

__all__ = ["require"]


def require(module: str, *, extra: str, what: str) -> ModuleType:
    """Import ``module`` or raise ``MissingExtra`` naming ``extra``.

    Args:
        module: the module to import (``duckdb``, ``dask.dataframe``, ``opentelemetry.sdk.trace``).
        extra: the mcpeval-nb extra that installs it (``scale``, ``otel``).
        what: the feature, for the message (``the DuckDB engine``).

    Raises:
        MissingExtra: the module cannot be imported.
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(what, extra) from None
