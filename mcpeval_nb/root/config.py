"""``<root>/config.json``, typed: the user's settings, each read with its own check (docs/governance.md).

The file is optional and never written by the package.  Keys other than the known ones are ignored, and
each setting is checked only when it is asked for, so a bad ``promotion_threshold`` never stops a
retention pass.  Errors name the file, never its content.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .files import read_json_file

__all__ = ["Config", "check_days"]


#: The longest retention a cutoff can be computed for everywhere (a century).
MAX_RETENTION_DAYS = 36500


def check_days(days: object, source: str) -> int:
    """A retention in days: a whole number from 1 to ``MAX_RETENTION_DAYS``.

    Raises:
        UsageError: it is not (``source`` says where it came from: ``days``, the config file).
    """
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_RETENTION_DAYS:
        raise UsageError(f"retention days must be a whole number from 1 to {MAX_RETENTION_DAYS} "
                         f"(from {source})")
    return days


@dataclass(frozen=True)
class Config:
    """The settings of one capture root.

    Attributes:
        path: ``<root>/config.json``.
        document: its JSON object (empty when the file is absent).
    """

    path: Path
    document: dict[str, Any]

    @classmethod
    def read(cls, path: Path) -> Config:
        """Read ``path`` (absent: no settings).

        Raises:
            UsageError: the file cannot be read or is not a JSON object (named by path, never quoted).
        """
        document = read_json_file(path, error=UsageError, invalid="is not a JSON object")
        if document is None:
            return cls(path, {})
        if not isinstance(document, dict):
            raise UsageError(f"{path} is not a JSON object")
        return cls(path, document)

    def value(self, key: str) -> object | None:
        """The raw value of ``key``, or None when it is absent (each caller checks its own key's type)."""
        return self.document.get(key)

    @property
    def retention_days(self) -> int | None:
        """``retention_days``, or None when unset.

        Raises:
            UsageError: it is not a whole number >= 1.
        """
        value = self.value("retention_days")
        return None if value is None else check_days(value, str(self.path))

    @property
    def promotion_threshold(self) -> float | None:
        """``promotion_threshold``, or None when unset (its range is the promotion's to check).

        Raises:
            UsageError: it is not a number.
        """
        value = self.value("promotion_threshold")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise UsageError(f"{self.path}: promotion_threshold must be a number")
        return float(value)
