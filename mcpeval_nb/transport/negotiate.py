"""Era negotiation: open a connection in the era ``--protocol`` asks for (the rule is ``transport.era``).

``open_session(connect, protocol=..., known=...)`` returns a session that has run its opening exchange:
the ``initialize`` handshake (legacy) or ``server/discover`` (modern).  ``known`` is the era a run
already found on its first connection; every later connection uses it without probing again.

What counts as a modern answer to ``server/discover``: a result whose ``supportedVersions`` names
2026-07-28, or an error with a modern code (-32020 to -32022).  Everything else (another error, an
HTTP 4xx without a JSON-RPC error body, a closed connection, no answer within the probe wait) means a
legacy server: ``auto`` falls back to ``initialize`` (on the same connection when it is still usable,
else on a fresh one).  A legacy handshake refused with -32022 naming 2026-07-28 (a server that answered
the slow probe late and locked itself modern) re-probes once.  Mismatches raise ``ProtocolMismatch``
naming the fix; a legacy run that fails its handshake checks on a fresh connection whether the server
is modern-only, so the error says so instead of "initialize was refused".

Budget: ``auto``'s probe is charged to the run's budget only when it finds a modern server (then it was
the modern handshake), and the diagnosis of a refused handshake is never charged, so a run against a
legacy server spends exactly the requests it spent before the modern era existed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import TransportError
from .era import (
    AUTO,
    LEGACY,
    MODERN_ERRORS,
    MODERN_VERSION,
    UNSUPPORTED_VERSION,
    Negotiated,
    modern_only,
    modern_unserved,
    supported_versions,
)
from .messages import Response
from .session import McpSession

__all__ = ["DISCOVER_WAIT_S", "open_session"]

#: How long ``auto`` waits for ``server/discover`` before taking the server for a legacy one.
DISCOVER_WAIT_S = 10.0

Connect = Callable[[], McpSession]


def _discovered(response: Response) -> dict[str, Any] | None:
    """The discover result when it names 2026-07-28, else None."""
    result = response.result
    if response.error is not None or not isinstance(result, dict):
        return None
    versions = supported_versions({"supported": result.get("supportedVersions")}) or ()
    return result if MODERN_VERSION in versions else None


def _modern_error(response: Response) -> bool:
    return response.error is not None and response.error.code in MODERN_ERRORS


def _retry_named(response: Response) -> bool:
    """-32022 naming 2026-07-28 itself: the server serves it after all (retry once, as the rule says)."""
    error = response.error
    return (error is not None and error.code == UNSUPPORTED_VERSION
            and MODERN_VERSION in (supported_versions(error.data) or ()))


def _probe(session: McpSession, capabilities: dict[str, Any], wait: float | None, *,
           charged: bool = True) -> Response | None:
    """Send the discover probe (again once when refused with -32022 naming 2026-07-28); None when the
    transport gave no usable answer (legacy evidence)."""
    try:
        response = session.discover(capabilities=capabilities, timeout=wait, charged=charged)
        if _retry_named(response):
            response = session.discover(capabilities=capabilities, timeout=wait, charged=charged)
        return response
    except TransportError as exc:
        if exc.reason == "transport-timeout" or getattr(exc, "keeps_session", False):
            return None
        if exc.reason == "transport-closed" and session.closed:
            return None  # a legacy stdio server that exits on an unknown method
        raise  # unreachable, a 5xx, a broken limit: no era verdict


def _initialize(session: McpSession, connect: Connect, capabilities: dict[str, Any]) -> McpSession:
    """The legacy handshake; a fresh connection when the probe left this one unusable."""
    if session.closed:
        session = connect()
    session.speak_legacy()
    try:
        session.initialize(capabilities=capabilities)
    except BaseException:
        session.close()
        raise
    return session


def _modern(session: McpSession, result: dict[str, Any]) -> McpSession:
    session.adopt(result)
    return session


def _auto(connect: Connect, capabilities: dict[str, Any], wait: float | None) -> McpSession:
    session = connect()
    try:
        response = _probe(session, capabilities, wait, charged=False)
        result = None if response is None else _discovered(response)
        if result is not None:
            session.charge()  # the probe was the modern handshake after all
    except BaseException:
        session.close()
        raise
    if result is not None:
        return _modern(session, result)
    if response is not None and _modern_error(response):
        session.close()
        raise modern_unserved_versions(response)
    try:
        return _initialize(session, connect, capabilities)
    except TransportError as exc:
        return _reprobe(connect, capabilities, exc)


def _reprobe(connect: Connect, capabilities: dict[str, Any], failed: TransportError) -> McpSession:
    """After a failed fallback handshake: a server that turned out modern (a slow probe), once."""
    try:
        session = connect()
    except TransportError:
        raise failed from None
    try:
        response = _probe(session, capabilities, DISCOVER_WAIT_S)
        result = None if response is None else _discovered(response)
    except BaseException:
        session.close()
        raise
    if result is None:
        session.close()
        raise failed from None
    return _modern(session, result)


def modern_unserved_versions(response: Response) -> TransportError:
    """A modern server that serves none of the versions this client speaks (named, no server text)."""
    data = response.error.data if response.error is not None else None
    named = ", ".join(supported_versions(data) or ()) or "none named"
    if response.error is not None and response.error.code != UNSUPPORTED_VERSION:
        return TransportError("MCP server/discover was refused with a modern error", reason="transport-error")
    return TransportError(f"the server serves protocol versions {named}, none of which this client speaks",
                          reason="transport-error")


def _modern_or_mismatch(connect: Connect, capabilities: dict[str, Any]) -> McpSession:
    session = connect()
    try:
        response = _probe(session, capabilities, None)
        result = None if response is None else _discovered(response)
        if result is None:
            raise modern_unserved()
    except BaseException:
        session.close()
        raise
    return _modern(session, result)


def _legacy(connect: Connect, capabilities: dict[str, Any]) -> McpSession:
    session = connect()
    try:
        session.initialize(capabilities=capabilities)
    except TransportError as exc:
        session.close()
        if _serves_modern(connect):
            raise modern_only() from None
        raise exc from None
    except BaseException:
        session.close()
        raise
    return session


def _serves_modern(connect: Connect) -> bool:
    """Diagnose a refused handshake on a fresh connection: does the server answer discover?"""
    try:
        session = connect()
    except TransportError:
        return False
    try:
        response = _probe(session, {}, DISCOVER_WAIT_S, charged=False)
        return response is not None and (_discovered(response) is not None or _modern_error(response))
    except TransportError:
        return False
    finally:
        session.close()


def open_session(connect: Connect, *, protocol: str = AUTO, known: Negotiated | None = None,
                 capabilities: dict[str, Any] | None = None, probe_wait: float | None = None) -> McpSession:
    """Open a connection in the era ``protocol`` names (or the era a run already found).

    Args:
        connect: opens a fresh, unnegotiated session to the target (``McpSession.connect``).
        protocol: ``auto``, ``legacy`` or ``2026-07-28`` (checked by ``era.check_protocol``).
        known: the era found on an earlier connection of the same run (no probe then).
        capabilities: the client capabilities (``initialize`` params, or every modern request's
            ``_meta``); {} by default.
        probe_wait: how long ``auto`` waits for the discover probe (default: 10 s or the session's
            timeout if that is shorter).

    Returns:
        The open session; ``session.negotiated`` says which era and version it speaks.

    Raises:
        ProtocolMismatch: the server does not serve the era asked for (the message names the fix).
        TransportError: the connection or its opening exchange failed.
    """
    caps = dict(capabilities or {})
    if known is not None:
        return _legacy(connect, caps) if not known.modern else _modern_or_mismatch(connect, caps)
    if protocol == LEGACY:
        return _legacy(connect, caps)
    if protocol == MODERN_VERSION:
        return _modern_or_mismatch(connect, caps)
    return _auto(connect, caps, probe_wait if probe_wait is not None else DISCOVER_WAIT_S)
