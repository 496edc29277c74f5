"""What a probe report's renderers read: the shape SARIF, JUnit and the session cost are written from.

``report.ProbeReport`` has this shape and lists those renderers in its format table, so they take the
shape rather than the class: the renderers sit below ``report.py`` and the imports point one way.
"""

from __future__ import annotations

from typing import Protocol

from .cases import CaseResult
from .readiness.model import Readiness

__all__ = ["ReportView"]


class ReportView(Protocol):
    """A probe report as its renderers see it (labels and numbers only)."""

    @property
    def server(self) -> str:
        """The server label."""

    @property
    def cases(self) -> tuple[CaseResult, ...]:
        """The case results in run order."""

    @property
    def readiness(self) -> Readiness | None:
        """The battery's readiness, or None."""

    @property
    def readiness_error(self) -> str | None:
        """The transport reason the battery could not complete with, or None."""

    @property
    def not_run(self) -> tuple[str, ...]:
        """The case ids a cancelled run never started."""

    @property
    def passed(self) -> bool:
        """Every case passed."""

    @property
    def gate(self) -> dict[str, int] | None:
        """``{"passed", "total"}`` when a manifest ran, else None."""
