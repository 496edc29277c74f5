"""A cancel event that also closes the sessions opened under it.

A plain ``threading.Event`` stops a probe run between cases and calls; a call already waiting on a slow
server would wait out its deadline.  ``CancelScope`` is an ``Event`` (so every ``cancel=`` parameter
takes it) that also closes every session ``watch``ed under it when it is set: a blocked call fails at
once, and a stdio child's process group is terminated and reaped (``McpSession.close``).  ``serve``
uses it to end a spawned run promptly when it stops.
"""

from __future__ import annotations

import threading
import weakref
from typing import Protocol

__all__ = ["CancelScope", "watch"]


class _Closable(Protocol):
    def close(self) -> None: ...  # pragma: no cover - protocol


class CancelScope(threading.Event):
    """An ``Event`` whose ``set()`` also closes the sessions watched under it (idempotent closes)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._watched: weakref.WeakSet[_Closable] = weakref.WeakSet()

    def watch(self, session: _Closable) -> None:
        """Close ``session`` when the scope is set (at once when it already is)."""
        with self._lock:
            if not self.is_set():
                self._watched.add(session)
                return
        session.close()

    def set(self) -> None:
        """Set the event, then close every watched session that is still alive."""
        with self._lock:
            super().set()
            alive = list(self._watched)
            self._watched.clear()
        for session in alive:
            session.close()


def watch(cancel: threading.Event | None, session: _Closable) -> None:
    """``cancel.watch(session)`` when ``cancel`` is a ``CancelScope``; nothing for a plain event."""
    if isinstance(cancel, CancelScope):
        cancel.watch(session)
