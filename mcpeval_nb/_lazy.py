"""A package's public names, loaded from their modules on first use (PEP 562).

A package ``__init__`` declares one table, module -> names, and takes its ``__all__``, ``__getattr__`` and
``__dir__`` from ``exports``: importing one module of the package (``mcpeval_nb.privacy.grammar``) then
runs nothing else of it, and ``mcpeval_nb.privacy.CallRecord`` still works.  This is what keeps the
stdio shim's start-up close to a bare interpreter (docs/performance.md): its process loads the modules
that start the server, not the ones that record.  Type checkers read the ``if TYPE_CHECKING:`` imports
each such ``__init__`` keeps beside its table (``tests/test_lazy_exports.py`` checks that they agree).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from typing import Any

__all__ = ["exports"]


def exports(namespace: dict[str, Any], table: Mapping[str, Sequence[str]]) -> tuple[
        list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for the package whose globals are ``namespace``.

    Args:
        namespace: the package's ``globals()``; a loaded name is stored there (the next access is plain).
        table: relative module name (``".grammar"``) -> the names it exports through the package.

    Returns:
        The sorted public names, the module ``__getattr__`` that loads one, and ``__dir__``.
    """
    package = namespace["__name__"]
    home = {name: module for module, names in table.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(home))

    return sorted(home), __getattr__, __dir__
