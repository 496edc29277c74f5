"""The one listing of a store's journals: ``journals(root, kind)`` (SPEC 6; ``root.layout`` names them).

Every consumer that asks "which journals are there" asks here: the tables, the Parquet export, the
findings index, erase and retention, ``config``.  A listing is sorted by kind (in the order asked) and by
name within a kind, so a daily kind runs oldest day first.

Two strengths, one rule for names:

* the plain listing reads the store directory (and ``probes/`` when a probe history is asked for).  An
  unreadable store is an error, never an empty one; an entry that is not a directory is kept even when
  it is a symlink, a FIFO or a device, so that opening it (``journal.snapshot.open_journal``) refuses it
  by name instead of silently skipping it or blocking on it;
* ``strict=<command>`` walks the whole store with ``journal.walk`` first and refuses any symlink or special
  file anywhere in it (``<command> refuses symlinks in the store: <path>``): the writers that rewrite or
  remove journals (erase, retention) act on nothing less.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..root.files import entry_exists, list_dir
from ..root.layout import JOURNAL_KINDS, PROBES, JournalKind, journal_kind, store_dir
from .walk import walk_store

__all__ = ["Journal", "journals"]

_BY_NAME = {kind.name: kind for kind in JOURNAL_KINDS}


@dataclass(frozen=True)
class Journal:
    """One journal of the store.

    Attributes:
        kind: its kind (``calls``, ``annotations``, ``trends``, ``sizes``).
        rel: its path relative to the store (POSIX form).
        path: its path.
    """

    kind: str
    rel: str
    path: Path

    @property
    def day(self) -> str | None:
        """The day in a daily journal's name (``unknown`` included); None for other kinds."""
        return _BY_NAME[self.kind].day(self.rel)


def _kinds(kind: str | Iterable[str] | None) -> list[JournalKind]:
    if kind is None:
        return list(JOURNAL_KINDS)
    names = [kind] if isinstance(kind, str) else list(kind)
    try:
        return [_BY_NAME[name] for name in names]
    except KeyError as exc:
        raise ValueError(f"unknown journal kind {exc.args[0]!r}") from None


def _plain(store: Path, kinds: list[JournalKind]) -> list[Journal]:
    names = list_dir(store)  # an unreadable store is an error, never an empty one
    found = [Journal(k.name, n, store / n) for k in kinds if k.daily for n in names if k.matches(n)]
    if PROBES in names:
        found += [Journal(k.name, k.rel(), store / k.rel()) for k in kinds
                  if not k.daily and entry_exists(store / k.rel())]
    return [j for j in found if not j.path.is_dir() or j.path.is_symlink()]


def _walked(store: Path, kinds: list[JournalKind], what: str) -> list[Journal]:
    if not os.path.lexists(store):
        return []
    found = []
    skip_probes = all(k.daily for k in kinds)
    for entry, fd in walk_store(store, what=what, skip_probes=skip_probes):
        os.close(fd)
        kind = journal_kind(entry.relpath)
        if kind is not None and kind in kinds:
            found.append(Journal(kind.name, entry.relpath, store / entry.relpath))
    return found


def journals(root: Path, kind: str | Iterable[str] | None = None, *,
             strict: str | None = None) -> list[Journal]:
    """The store's journals of ``kind``: a kind, several (listed in that order) or None for every kind.

    Args:
        root: the capture root's directory.
        kind: ``calls``, ``annotations``, ``trends``, ``sizes``, several of them, or None.
        strict: the command named when a symlink or special file anywhere in the store is refused (the
            symlink-proof walk); None for the plain listing.

    Returns:
        The journals, by kind in the order asked, then by name.

    Raises:
        JournalError: the store (or, with ``strict``, an entry of it) cannot be read, or ``strict`` and
            the store holds a symlink or a special file.
        ValueError: an unknown kind.
    """
    kinds = _kinds(kind)
    store = store_dir(root)
    found = _walked(store, kinds, strict) if strict is not None else _plain(store, kinds)
    order = {k.name: i for i, k in enumerate(kinds)}
    return sorted(found, key=lambda j: (order[j.kind], j.rel))
