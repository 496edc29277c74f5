"""One table of output formats per document, and the one call that writes a document in a format.

Every document the CLI prints with ``--format`` (a probe report and its SARIF and JUnit forms, a diff, a
comparison, a gate report, result sizes, a phase capture, the findings) declares its formats once, as
the ``FORMATS`` table of its class: a ``FormatSet`` of ``Format`` rows, each a name and the function that
writes the document in it.  ``render(doc, fmt, ...)`` is the one call: it refuses a format the table does
not hold (with the table's own message), runs the table's option checks, and writes.  A format owns its
empty case (sqlite-utils' ``output_rows``, ``cli.py:3683-3712``, writes ``[]`` itself when there are no
rows): when the table says a document is empty, a format with an ``empty`` text writes that text, so no
caller ever special-cases "nothing to print".  The documents' own ``render`` methods are this call.

To put a document on the table, give its class ``FORMATS: ClassVar[FormatSet[<its class>]]`` (declared
with the class, never registered at import time from elsewhere); ``render`` finds it there.  The table
sits with the documents rather than in one dict here because the documents live above this module
(gates, sizes, triage): a dict here would import them all and point imports upward.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ..errors import UsageError
from ..jsonfmt import dumps

__all__ = ["Format", "FormatSet", "RenderOptions", "Rendered", "aligned", "json_text", "lines_text", "render"]

D = TypeVar("D")


@dataclass(frozen=True, kw_only=True)
class RenderOptions:
    """What a format may be asked besides the document (each format reads only what it uses).

    Attributes:
        brief: text and markdown without hint lines or the per-area readiness breakdown (reports).
        manifest: the manifest file a report's cases came from (SARIF locates each case's line).
        price_per_mtok: USD per million tokens: a report's text and markdown add the session cost line.
        fail_on_change: a diff's changed cases are JUnit failures too.
        corpus: a readiness corpus (``probe.corpus.Corpus``): a report's text and markdown add the
            placement lines when its standard is the readiness's (never JSON).
    """

    brief: bool = False
    manifest: str | Path | None = None
    price_per_mtok: float | None = None
    fail_on_change: bool = False
    corpus: Any = None


def _never(_doc: Any) -> bool:
    return False


def _no_check(_options: RenderOptions) -> None:
    return None


@dataclass(frozen=True)
class Format(Generic[D]):
    """One row of a format table.

    Attributes:
        name: the ``--format`` value. write: writes the document (ends with a newline).
        empty: this format's whole output for a document its table calls empty, or None to write it as
            any other (the format's own rendering of "nothing").
    """

    name: str
    write: Callable[[D, RenderOptions], str]
    empty: str | None = None


@dataclass(frozen=True)
class FormatSet(Generic[D]):
    """A document's format table: its formats in ``--format`` order.

    Attributes:
        formats: the rows. unknown: the ``UsageError`` text for a format not in the table.
        is_empty: when a document counts as empty (see ``Format.empty``).
        check: option checks made before any format writes (a refused option writes nothing).
    """

    formats: tuple[Format[D], ...]
    unknown: str
    is_empty: Callable[[D], bool] = _never
    check: Callable[[RenderOptions], None] = _no_check
    _by_name: dict[str, Format[D]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {f.name: f for f in self.formats})

    @property
    def names(self) -> tuple[str, ...]:
        """The format names, in table order."""
        return tuple(f.name for f in self.formats)

    def render(self, doc: D, fmt: str, options: RenderOptions | None = None) -> str:
        """Write ``doc`` in ``fmt``.

        Raises:
            UsageError: a format the table does not hold (``unknown``), or an option ``check`` refused.
        """
        chosen = self._by_name.get(fmt)
        if chosen is None:
            raise UsageError(self.unknown)
        opts = options or RenderOptions()
        self.check(opts)
        if chosen.empty is not None and self.is_empty(doc):
            return chosen.empty
        return chosen.write(doc, opts)


class Rendered(Protocol):
    """A document on the format table: its class declares ``FORMATS``."""

    FORMATS: ClassVar[FormatSet[Any]]


def render(doc: Rendered, fmt: str = "text", *, brief: bool = False, manifest: str | Path | None = None,
           price_per_mtok: float | None = None, fail_on_change: bool = False, corpus: Any = None) -> str:
    """Write a document in one of its formats (what every ``--format`` prints).

    Args:
        doc: a document whose class declares ``FORMATS`` (``ProbeReport``, ``ProbeDiff``, ``Comparison``,
            ``GateReport``, ``ResultSizes``, ``PhaseView``).
        fmt: a name from its table (``type(doc).FORMATS.names``).
        brief / manifest / price_per_mtok / fail_on_change / corpus: see ``RenderOptions`` (ignored by
            formats that do not use them).

    Returns:
        The text, ending with a newline (or a format's empty text).

    Raises:
        UsageError: an unknown format or a refused option (an invalid price).
    """
    options = RenderOptions(brief=brief, manifest=manifest, price_per_mtok=price_per_mtok,
                            fail_on_change=fail_on_change, corpus=corpus)
    return type(doc).FORMATS.render(doc, fmt, options)


def json_text(value: Any) -> str:
    """A JSON document as every format writes it: pretty (2 spaces), key-sorted, a trailing newline."""
    return dumps(value, sort_keys=True, indent=2) + "\n"


def lines_text(lines: Iterable[str]) -> str:
    """Lines, each ending with a newline."""
    return "".join(line + "\n" for line in lines)


def aligned(rows: Sequence[Sequence[str]], *, sep: str = " ") -> list[str]:
    """Rows as space-aligned lines (each column as wide as its widest cell, trailing blanks dropped)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [sep.join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
