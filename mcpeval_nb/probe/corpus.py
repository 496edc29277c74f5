"""Readiness corpus placement (SPEC 15): where a report's readiness and catalog cost sit among observed
servers, from a private ``<root>/corpus.json``.

A corpus is ``mcpeval.readiness-corpus/v2``: one named ``standard`` and, per observed public server,
its readiness score, its tool count and its catalog tokens.  Any other schema (``/v1`` and the
collection format ``/v3`` included) is ignored: no placement.  The reference tool ships a public corpus
collected under ``mcpeval-standard/1``; a readiness scored under ``mcpeval-standard/2`` or
``mcpeval-modern/1`` never places against it, because placement is printed only when the corpus's
standard equals the report's.  This package ships no corpus: a user who keeps one (their own
collection under their own standard) puts it at ``<root>/corpus.json``.

Text and markdown reports then add::

    standard corpus (<std>): above A, tied T, below B of N observed servers
    catalog: <t> tokens over <n> tools, lighter than <k> of <m> observed servers (median <x> tokens)

(the median is the lower middle for an even count).  JSON reports never carry corpus context.  Reading:
at most 4 MiB, the observations under ``observations`` (or ``servers``), each with an integer
``readiness`` (or ``score``) 0-100 and optional ``tool_count`` and ``catalog_tokens``; server names are
never read into anything printed.  A v2 file that breaks these rules is a ``DocumentError`` naming the
file, never its content.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import DocumentError
from ..jsonfmt import JSONFormatError, loads
from ..root import Root, RootLike
from ..root.layout import corpus_path
from .readiness.model import Readiness

__all__ = ["CORPUS_SCHEMA", "Corpus", "load_corpus", "placement_lines"]

CORPUS_SCHEMA = "mcpeval.readiness-corpus/v2"
_MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Corpus:
    """The numbers of a readiness corpus (no server names).

    Attributes:
        standard: the standard every observation was scored under.
        scores: the observed readiness scores. catalogs: the observed catalog token counts (where known).
    """

    standard: str
    scores: tuple[int, ...]
    catalogs: tuple[int, ...] = ()


def _count(value: Any, *, high: int | None = None) -> bool:
    return type(value) is int and value >= 0 and (high is None or value <= high)


def _observation(raw: Any, where: str) -> tuple[int, int | None]:
    if not isinstance(raw, dict):
        raise DocumentError(f"{where} must be an object")
    score = raw.get("readiness", raw.get("score"))
    if isinstance(score, dict):
        score = score.get("score")
    if not _count(score, high=100) or not isinstance(score, int):
        raise DocumentError(f"{where} readiness must be an integer from 0 to 100")
    tokens = raw.get("catalog_tokens")
    if tokens is not None and not _count(tokens):
        raise DocumentError(f"{where} catalog_tokens must be a non-negative integer")
    return score, None if tokens is None else int(tokens)


def parse_corpus(text: bytes, *, source: str = "corpus") -> Corpus | None:
    """Read a corpus document.

    Returns:
        The corpus, or None for a document that is not ``mcpeval.readiness-corpus/v2`` (ignored).

    Raises:
        DocumentError: a v2 document that is not valid (names ``source`` and the place, never a value).
    """
    try:
        doc = loads(text)
    except (JSONFormatError, UnicodeDecodeError):
        raise DocumentError(f"{source}: not valid JSON") from None
    if not isinstance(doc, dict) or doc.get("schema") != CORPUS_SCHEMA:
        return None
    standard = doc.get("standard")
    observed = doc.get("observations", doc.get("servers"))
    if not isinstance(standard, str) or not isinstance(observed, list):
        raise DocumentError(f"{source}: a readiness corpus needs a standard and a list of observations")
    pairs = [_observation(o, f"{source}: observation {i + 1}") for i, o in enumerate(observed)]
    return Corpus(standard, tuple(s for s, _ in pairs), tuple(t for _, t in pairs if t is not None))


def load_corpus(root: RootLike = None) -> Corpus | None:
    """The private corpus at ``<root>/corpus.json``, or None when there is none (or it is not v2).

    Raises:
        DocumentError: the file is larger than 4 MiB, unreadable, or an invalid v2 corpus.
    """
    path = corpus_path(Root.of(root, check=False).path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError:
        raise DocumentError(f"{path}: the readiness corpus cannot be read") from None
    if len(data) > _MAX_BYTES:
        raise DocumentError(f"{path}: the readiness corpus exceeds 4 MiB")
    return parse_corpus(data, source=str(path))


def _median(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def placement_lines(corpus: Corpus | None, readiness: Readiness | None) -> list[str]:
    """SPEC 15's placement lines, or none (no corpus, no scored readiness, or different standards)."""
    if corpus is None or readiness is None or readiness.display_only or corpus.standard != readiness.standard:
        return []
    score = readiness.score
    above = sum(s < score for s in corpus.scores)
    tied = sum(s == score for s in corpus.scores)
    below = sum(s > score for s in corpus.scores)
    lines = [f"standard corpus ({corpus.standard}): above {above}, tied {tied}, below {below} of "
             f"{len(corpus.scores)} observed servers"]
    tokens = readiness.area("context").measurements.get("catalog_tokens")
    if tokens is not None and corpus.catalogs:
        lighter = sum(c > tokens for c in corpus.catalogs)
        lines.append(f"catalog: {tokens} tokens over {readiness.surface.tools} tools, lighter than {lighter} "
                     f"of {len(corpus.catalogs)} observed servers (median {_median(list(corpus.catalogs))} "
                     "tokens)")
    return lines
