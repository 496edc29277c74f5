"""``catalog pin``: approve each server's latest complete catalog (``<root>/catalog-pins.json``).

The file is written owner-only (0600) and atomically (a temp file in the root, fsynced, renamed over
the old one) under a sidecar lock, so two pins at once cannot lose each other's servers; the servers not
pinned again keep their pins.  Every pin appends an audit record (``catalog_pin``: the server label or
none, counts, the file's path).  The pinned catalog is the latest complete listing: its time is the
pin's ``pinned_at``, from which ``catalog check`` judges every later listing.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import filelock

from ..analysis.catalog import Source, catalog_history, listings, open_source
from ..analysis.catalog_pins import CatalogPins, PinnedCatalog, load_pins, pins_path
from ..clock import now_ts
from ..errors import JournalError, LockTimeout, UsageError
from ..governance import audit
from ..jsonfmt import dumps
from ..limits import LOCK_TIMEOUT_S

__all__ = ["PinResult", "pin_catalogs"]


@dataclass(frozen=True)
class PinResult:
    """What ``pin_catalogs`` pinned: per server label, how many tools and the listing's time."""

    path: Path
    servers: dict[str, tuple[int, str]]
    audit_written: bool = True

    def lines(self) -> list[str]:
        """``pinned <n> tool(s) of <server> (listing of <ts>)`` per server, then the file."""
        out = [f"pinned {n} tool(s) of {server} (listing of {ts})"
               for server, (n, ts) in sorted(self.servers.items())]
        out.append(f"wrote {self.path} (owner-only; never shared)")
        if not self.audit_written:
            out.append("audit: 1 record could not be written")
        return out


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        raise JournalError(f"cannot write {path}: {exc.strerror}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _latest(root: Source, server: str | None) -> dict[str, PinnedCatalog]:
    found: dict[str, PinnedCatalog] = {}
    for listing in listings(catalog_history(root, server=server)):
        if listing.complete and listing.ts is not None:
            found[listing.server] = PinnedCatalog(pinned_at=now_ts(listing.ts), tools=dict(listing.tools))
    return found


def pin_catalogs(root: Source = None, *, server: str | None = None,
                 timeout: float = LOCK_TIMEOUT_S) -> PinResult:
    """Pin the latest complete catalog of every recorded server (or of ``server``).

    Args:
        root: the capture root, or an open ``Store``.
        server: pin only this server label.
        timeout: seconds to wait for another pin to finish.

    Returns:
        The servers pinned.  An audit record is appended.

    Raises:
        UsageError: no complete listing recorded (for ``server``), or the existing pins file is invalid.
        LockTimeout: another pin held the file past the deadline.
        JournalError: the file cannot be written.
    """
    store = open_source(root)
    base = store.root
    latest = _latest(store, server)
    if not latest:
        what = f"server {server}" if server is not None else "any server"
        raise UsageError(f"no complete tool listing recorded for {what}; capture a session first")
    path = pins_path(base)
    try:
        with filelock.FileLock(str(base / ".catalog-pins.lock"), timeout=timeout):
            pins = CatalogPins(servers={**load_pins(base).servers, **latest})
            _write(path, dumps(pins.to_json(), sort_keys=True, indent=2) + "\n")
    except filelock.Timeout:
        raise LockTimeout(path, "exclusive", timeout) from None
    tools = sum(len(p.tools) for p in latest.values())
    written = audit.record(base, action="catalog_pin", labels={"server": server} if server else {},
                           counts={"servers": len(latest), "tools": tools}, paths=[path])
    return PinResult(path, {s: (len(p.tools), p.pinned_at) for s, p in latest.items()}, written)
