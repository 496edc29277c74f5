"""The evaluation budget shared by every connection of one probe run (SPEC 8.4).

One ``Budget`` counts the client requests of a whole run (at most 4,096) and its wall time (at most
300 s).  Every request a session sends is charged first; once either bound is spent the budget stays
exhausted and every later charge raises ``TransportError(reason="evaluation-budget-exceeded")``.  The
budget's end also caps each response deadline, so a run never waits past it.  Thread-safe: the
contention kind charges one budget from two clients at once.
"""

from __future__ import annotations

import threading
import time

from ..errors import TransportError
from ..limits import MAX_EVAL_REQUESTS, MAX_EVAL_SECONDS

__all__ = ["BUDGET_EXCEEDED", "BUDGET_MESSAGE", "Budget"]

BUDGET_EXCEEDED = "evaluation-budget-exceeded"
BUDGET_MESSAGE = "evaluation budget exceeded"


class Budget:
    """A request and wall-time budget shared by the connections of one probe run.

    Args:
        max_requests: client requests allowed in total (SPEC 8.4: 4,096).
        max_seconds: wall time allowed from construction (SPEC 8.4: 300 s).

    Raises:
        ValueError: a negative bound.
    """

    def __init__(self, *, max_requests: int = MAX_EVAL_REQUESTS,
                 max_seconds: float = MAX_EVAL_SECONDS) -> None:
        if max_requests < 0 or max_seconds < 0:
            raise ValueError("budget bounds must not be negative")
        self.max_requests = max_requests
        self.max_seconds = float(max_seconds)
        self._start = time.monotonic()
        self._used = 0
        self._spent = False
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        """Requests charged so far (refused charges excluded)."""
        return self._used

    @property
    def deadline(self) -> float:
        """The ``time.monotonic()`` instant at which the wall-time budget runs out."""
        return self._start + self.max_seconds

    @property
    def exhausted(self) -> bool:
        """True once a bound is spent: a charge was refused, or the wall time has run out."""
        if not self._spent and time.monotonic() >= self.deadline:
            self._spent = True
        return self._spent

    def charge(self) -> None:
        """Count one client request against the budget.

        Raises:
            TransportError: reason ``evaluation-budget-exceeded`` when the request would pass either bound.
        """
        with self._lock:
            if self.exhausted or self._used >= self.max_requests:
                self._spent = True
                raise TransportError(BUDGET_MESSAGE, reason=BUDGET_EXCEEDED)
            self._used += 1

    def error(self) -> TransportError:
        """The error a session raises when the budget is found exhausted.

        Returns:
            A ``TransportError`` with reason ``evaluation-budget-exceeded``.
        """
        return TransportError(BUDGET_MESSAGE, reason=BUDGET_EXCEEDED)
