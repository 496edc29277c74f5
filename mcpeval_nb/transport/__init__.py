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

from .budget import Budget
from .http import AUTHORIZATION_ENV, HttpChannel, read_authorization
from .messages import (
    METHOD_UNAVAILABLE,
    Catalog,
    HttpTarget,
    PendingCall,
    Response,
    RpcError,
    ServerRequestHandler,
    StdioTarget,
    Target,
    ToolOutcome,
    decline,
)
from .session import PROTOCOL_VERSION, Channel, McpSession
from .stdio import StdioChannel

__all__ = [
    "AUTHORIZATION_ENV",
    "METHOD_UNAVAILABLE",
    "PROTOCOL_VERSION",
    "Budget",
    "Catalog",
    "Channel",
    "HttpChannel",
    "HttpTarget",
    "McpSession",
    "PendingCall",
    "Response",
    "RpcError",
    "ServerRequestHandler",
    "StdioChannel",
    "StdioTarget",
    "Target",
    "ToolOutcome",
    "decline",
    "read_authorization",
]
