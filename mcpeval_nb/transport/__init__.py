"""Transport: upstream endpoint policy and loopback provenance checks, bounded MCP clients.

``transport.policy`` holds which upstream URLs may be contacted and which listen addresses are loopback;
``transport.loopback`` holds the rules every loopback listener (``serve``, ``shim-http``) applies to a
request: the bounded request read and the Host/Origin/Content-Type checks (SPEC 13.1-13.2).

The bounded clients (SPEC 8.2, 14): ``McpSession.connect(StdioTarget(...) | HttpTarget(...))`` opens a
``StdioChannel`` (child process, 4 MiB frames, 16 queued frames) or an ``HttpChannel`` (Streamable HTTP,
8 MiB bodies, 5 s I/O timeouts, no redirects); the session adds fixed deadlines, the notification
buffer, server-request handling and the shared ``Budget``.

Raw content: ``McpSession`` and the values it hands up (``Response``, ``RpcError``, ``ToolOutcome``,
``Catalog``) carry raw protocol content (results, error messages, tool descriptions and schemas) from
the server.  They live only here, for the probe and for users driving a server directly; they are not
part of the payload-free public surface (``mcpeval_nb.__all__``), and nothing they hold reaches a
journal except through ``privacy``.  Import them from ``mcpeval_nb.transport``.
"""

from __future__ import annotations

from .._lazy import exports as _exports

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from .budget import Budget as Budget
    from .http import AUTHORIZATION_ENV as AUTHORIZATION_ENV
    from .http import HttpChannel as HttpChannel
    from .http import read_authorization as read_authorization
    from .messages import METHOD_UNAVAILABLE as METHOD_UNAVAILABLE
    from .messages import Catalog as Catalog
    from .messages import HttpTarget as HttpTarget
    from .messages import PendingCall as PendingCall
    from .messages import Response as Response
    from .messages import RpcError as RpcError
    from .messages import ServerRequestHandler as ServerRequestHandler
    from .messages import StdioTarget as StdioTarget
    from .messages import Target as Target
    from .messages import ToolOutcome as ToolOutcome
    from .messages import decline as decline
    from .session import PROTOCOL_VERSION as PROTOCOL_VERSION
    from .session import Channel as Channel
    from .session import McpSession as McpSession
    from .stdio import StdioChannel as StdioChannel

_EXPORTS: dict[str, tuple[str, ...]] = {
    ".budget": ("Budget",),
    ".http": ("AUTHORIZATION_ENV", "HttpChannel", "read_authorization"),
    ".messages": (
        "METHOD_UNAVAILABLE", "Catalog", "HttpTarget", "PendingCall", "Response", "RpcError",
        "ServerRequestHandler", "StdioTarget", "Target", "ToolOutcome", "decline"
    ),
    ".session": ("PROTOCOL_VERSION", "Channel", "McpSession"),
    ".stdio": ("StdioChannel",),
}

del TYPE_CHECKING  # not a public name
__all__, __getattr__, __dir__ = _exports(globals(), _EXPORTS)

