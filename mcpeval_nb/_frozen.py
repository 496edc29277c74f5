"""``Frozen``: a small immutable value class for modules that load before the stdio shim's server starts.

A frozen dataclass is the package's option bundle (DESIGN.md), but ``dataclasses`` (with ``inspect``)
and ``typing`` cost more to import than everything the shim's process needs before it starts its server
(docs/performance.md).  The few values on that path (``ShimOptions``, ``root.layout.JournalKind``) take
this base instead: their ``__slots__`` name their fields in order; ``__init__`` sets them through
``_init``; afterwards setting or deleting an attribute raises; equality, hashing and ``repr`` follow the
fields (``_hidden`` ones are left out of ``repr``: a server's environment may hold secrets).
"""

from __future__ import annotations

__all__ = ["Frozen"]


class Frozen:
    """Immutable fields named by ``__slots__`` (in order), compared, hashed and shown like a dataclass."""

    __slots__: tuple[str, ...] = ()
    #: Fields left out of ``repr``.
    _hidden: tuple[str, ...] = ()

    def _init(self, **fields: object) -> None:
        """Set every field once (call from ``__init__``)."""
        for name in self.__slots__:
            object.__setattr__(self, name, fields[name])

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__
                          if name not in self._hidden)
        return f"{type(self).__name__}({shown})"
