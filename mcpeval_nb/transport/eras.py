"""The era half of ``McpSession``: speaking the stateless 2026-07-28 revision on one connection.

``discover`` switches a connection to the modern era and sends ``server/discover``; ``adopt`` takes a
discover result as the connection's state; from then on every request's params carry ``_meta``
(``io.modelcontextprotocol/protocolVersion``, ``clientInfo``, ``clientCapabilities``) and, on HTTP,
the headers ``transport.headers`` computes (``Mcp-Param-*`` from each listed tool's ``x-mcp-header``
declaration).  ``speak_legacy`` turns an ``auto`` probe back to the handshake era.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._version import __version__
from .era import (
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_SERVER_INFO,
    META_VERSION,
    MODERN_VERSION,
    Negotiated,
    supported_versions,
)
from .headers import ParamHeaders, param_headers, request_headers
from .messages import Response

if TYPE_CHECKING:
    from .budget import Budget
    from .session import Channel

__all__ = ["CLIENT_NAME", "EraMixin"]

CLIENT_NAME = "mcpeval"


class EraMixin:
    """The modern-era state and methods of ``McpSession`` (see the module docstring)."""

    _channel: Channel
    _budget: Budget | None
    _free: bool
    _modern: str | None
    _caps: dict[str, Any]
    _params: dict[str, ParamHeaders | None]
    server_capabilities: dict[str, Any]
    server_info: dict[str, Any]
    protocol_version: str | None
    negotiated: Negotiated | None
    instructions: str | None
    supported_versions: tuple[str, ...]

    def request(self, method: str, params: Any = None, *,
                timeout: float | None = None) -> Response:  # pragma: no cover - McpSession's
        raise NotImplementedError

    def discover(self, *, version: str = MODERN_VERSION, capabilities: dict[str, Any] | None = None,
                 timeout: float | None = None, charged: bool = True) -> Response:
        """Send ``server/discover`` at ``version`` (the connection speaks the modern era from now on).

        Args:
            version: the protocol version in ``_meta``.
            capabilities: the client capabilities sent with every later request ({} by default).
            timeout: seconds until the deadline (default: the session's timeout).
            charged: charge the request to the run's budget (``auto``'s probe is charged only when it
                finds a modern server, so a legacy server's run spends exactly what it did before).

        Returns:
            The raw response; ``transport.negotiate`` decides what it means and calls ``adopt``.

        Raises:
            TransportError: as ``request`` (an HTTP 4xx without a JSON-RPC error body fails this
                request only; the session stays open).
        """
        self._speak(version, capabilities)
        self._free = not charged
        try:
            return self.request("server/discover", {}, timeout=timeout)
        finally:
            self._free = False

    def charge(self) -> None:
        """Charge one request to the run's budget (an ``auto`` probe that found a modern server).

        Raises:
            TransportError: ``evaluation-budget-exceeded``.
        """
        if self._budget is not None:
            self._budget.charge()

    def adopt(self, result: dict[str, Any], *, version: str = MODERN_VERSION) -> None:
        """Take a discover result as this connection's modern state (capabilities, info, instructions).

        Args:
            result: the ``server/discover`` result object (raw; in memory only).
            version: the modern version the connection speaks.
        """
        caps, meta = result.get("capabilities"), result.get("_meta")
        info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        instructions = result.get("instructions")
        self.server_capabilities = caps if isinstance(caps, dict) else {}
        self.server_info = info if isinstance(info, dict) else {}
        self.instructions = instructions if isinstance(instructions, str) else None
        self.supported_versions = supported_versions({"supported": result.get("supportedVersions")}) or ()
        self.protocol_version = version
        self.negotiated = Negotiated("modern", version)
        self._speak(version, self._caps)

    def speak_legacy(self) -> None:
        """Back to the legacy era on this connection (an ``auto`` probe that found a legacy server)."""
        self._modern = None
        set_modern = getattr(self._channel, "set_modern", None)
        if set_modern is not None:
            set_modern(None)

    def _speak(self, version: str, capabilities: dict[str, Any] | None) -> None:
        self._modern = version
        self._caps = dict(capabilities or {})
        set_modern = getattr(self._channel, "set_modern", None)
        if set_modern is not None:
            set_modern(version)

    def declare(self, capabilities: dict[str, Any]) -> None:
        """Modern only: the client capabilities every later request carries in ``_meta``."""
        if self._modern is not None:
            self._caps = dict(capabilities)

    @property
    def modern(self) -> bool:
        """True when this connection speaks the 2026-07-28 era."""
        return self._modern is not None

    def exclude_invalid_headers(self, tools: list[dict[str, Any]]
                                ) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
        """On HTTP (where headers exist), the tools without their invalid ``x-mcp-header`` ones, and the
        names left out: a 2026-07-28 client MUST exclude such tools (stdio MAY ignore the annotation)."""
        if getattr(self._channel, "set_modern", None) is None:
            return tools, ()
        kept = [t for t in tools if self._params.get(str(t.get("name"))) is not None]
        return kept, tuple(str(t.get("name")) for t in tools if self._params.get(str(t.get("name"))) is None)

    def learn_tools(self, tools: list[dict[str, Any]]) -> None:
        """Remember each tool's ``x-mcp-header`` declaration (for ``Mcp-Param-*`` headers on HTTP)."""
        for entry in tools:
            name = entry.get("name") if isinstance(entry, dict) else None
            if isinstance(name, str):
                self._params[name] = param_headers(entry.get("inputSchema"))

    def _with_meta(self, params: Any, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``params`` with the modern ``_meta`` (protocol version, client info, client capabilities)."""
        body = dict(params) if isinstance(params, dict) else {}
        meta = dict(body["_meta"]) if isinstance(body.get("_meta"), dict) else {}
        meta.update({META_VERSION: self._modern,
                     META_CLIENT_INFO: {"name": CLIENT_NAME, "version": __version__},
                     META_CAPABILITIES: self._caps})
        meta.update(extra or {})
        body["_meta"] = meta
        return body

    def _headers(self, message: dict[str, Any]) -> dict[str, str] | None:
        if self._modern is None:
            return None
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        spec = self._params.get(name) if message["method"] == "tools/call" and isinstance(name, str) else None
        return request_headers(message, version=self._modern, params=spec)

