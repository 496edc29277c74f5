"""The gate every listed call passes before any call is made (docs/sizes.md).

Two halves, both the probe runner's: the manifest half (``probe.manifest.require_mutation``: a mutating
call needs its sandbox AND ``--allow-mutation``), checked before a server starts; and the catalog half
(``probe.kinds.access_refusal``: the tool must be listed, and a read-only call may not name a tool the
server annotates ``destructiveHint: true`` or ``readOnlyHint: false``), checked right after ``tools/list``
and before the first ``tools/call``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UsageError
from ..probe.kinds import access_refusal, undeclared_words
from ..probe.manifest import require_mutation
from ..transport.messages import Catalog
from .manifest import ListedCall

__all__ = ["check_authority", "check_listed"]


def check_authority(calls: Sequence[ListedCall], *, allow_mutation: bool) -> None:
    """The manifest half of the double gate, before any server starts.

    Raises:
        UsageError: a mutating call without ``allow_mutation`` (``mutating calls require --allow-mutation``).
    """
    for call in calls:
        require_mutation(
            call.access, sandboxed=call.sandbox is not None, allow_mutation=allow_mutation, what="calls"
        )


def check_listed(calls: Sequence[ListedCall], catalog: Catalog, *, where: str = "calls entry") -> None:
    """The catalog half: every call names a listed tool, and no read-only call names a writer.

    Args:
        calls: the calls about to be made. catalog: the tools the server lists now.
        where: how messages name an entry (``calls entry``, ``phase run advance call``).

    Raises:
        UsageError: an unlisted tool, or a read-only call of a tool annotated as a writer (the entry is
            named by its index, never by a value; nothing has been called).
    """
    for call in calls:
        refusal = access_refusal(catalog.get(call.tool), call.access)
        if refusal == "undeclared":
            raise UsageError(
                f"{where} #{call.index}: the tool was not declared by the server "
                f"({undeclared_words(call.tool, catalog)}); nothing was called"
            )
        if refusal == "writer":
            raise UsageError(
                f"{where} #{call.index}: refuses a tool annotated as a writer (declare "
                "access mutating with a sandbox, and pass --allow-mutation); nothing was called"
            )
