"""``sdk_eras`` over stateless Streamable HTTP: the era gate and the OAuth fixture.

``era_gate(app, era)`` wraps the SDK's ASGI app: ``modern`` answers a POST whose body lacks the 2026-07-28
``_meta`` envelope (an ``initialize``) with 400 and a JSON-RPC -32022 naming the served versions, and a GET
or DELETE with 405; ``legacy`` answers a POST that carries the envelope with a 400 whose body is not a
modern JSON-RPC error, so an ``auto`` client falls back to ``initialize``; ``dual`` passes everything on.

``oauth_settings(origin)`` makes the server a protected resource and its own minimal authorization server
(in memory): dynamic registration, an authorization endpoint that approves at once (it redirects to the
client's ``redirect_uri`` with a code), PKCE code exchange, and access tokens ``CANARY-token-<hex>``.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.auth.provider import AccessToken, AuthorizationCode, AuthorizationParams, RefreshToken
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import AnyHttpUrl, AnyUrl

__all__ = ["TOKEN_PREFIX", "era_gate", "oauth_http_client", "oauth_settings"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_PREFIX = "CANARY-token-"
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


async def _reply(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _modern(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    meta = (message.get("params") or {}).get("_meta") if isinstance(message, dict) else None
    return isinstance(meta, dict) and _VERSION_KEY in meta and message.get("method") != "initialize"


def era_gate(app: ASGIApp, era: str) -> ASGIApp:
    """Wrap ``app`` so that it serves only ``era`` (``dual``: unchanged)."""
    if era == "dual":
        return app

    async def gated(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].endswith("/mcp"):
            return await app(scope, receive, send)
        if scope["method"] != "POST":
            if era == "modern":
                return await _reply(send, 405, b'{"error":"method not allowed"}')
            return await app(scope, receive, send)
        chunks, more = [], True
        while more:
            event = await receive()
            chunks.append(event.get("body", b""))
            more = event.get("more_body", False)
        body = b"".join(chunks)
        if era == "modern" and not _modern(body):
            error = {"jsonrpc": "2.0", "id": _id(body), "error": {
                "code": -32022, "message": "this server serves only the 2026-07-28 protocol",
                "data": {"supported": list(MODERN_PROTOCOL_VERSIONS)}}}
            return await _reply(send, 400, json.dumps(error).encode())
        if era == "legacy" and _modern(body):
            return await _reply(send, 400, b'{"error":"this server speaks only the handshake protocol"}')
        sent = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, replay, send)

    return gated


def _id(body: bytes) -> Any:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message.get("id") if isinstance(message, dict) else None


class Provider:
    """A minimal in-memory authorization server that approves every request at once."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.tokens: dict[str, AccessToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        """A registered client."""
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        """Keep a client's registration."""
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        """Approve at once: the redirect URI with a fresh code and the client's state."""
        code = secrets.token_hex(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300,
            client_id=client.client_id or "", code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri, resource=params.resource,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly)
        sep = "&" if "?" in str(params.redirect_uri) else "?"
        state = f"&state={params.state}" if params.state else ""
        return f"{params.redirect_uri}{sep}code={code}{state}"

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        """A code issued to this client."""
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        """A bearer token for a code (the code is spent)."""
        self.codes.pop(authorization_code.code, None)
        token = TOKEN_PREFIX + secrets.token_hex(16)
        self.tokens[token] = AccessToken(token=token, client_id=client.client_id or "",
                                         scopes=authorization_code.scopes, expires_at=int(time.time()) + 3600,
                                         resource=authorization_code.resource)
        return OAuthToken(access_token=token, token_type="Bearer", expires_in=3600,
                          scope=" ".join(authorization_code.scopes) or None)

    async def load_refresh_token(self, client: OAuthClientInformationFull,
                                 refresh_token: str) -> RefreshToken | None:
        """No refresh tokens are issued."""
        return None

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        """Never reached (no refresh tokens)."""
        raise NotImplementedError

    async def load_access_token(self, token: str) -> AccessToken | None:
        """A token this server issued."""
        return self.tokens.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        """Forget a token."""
        self.tokens.pop(token.token, None)


def oauth_settings(origin: str) -> dict[str, Any]:
    """``MCPServer`` keyword arguments for a protected resource at ``<origin>/mcp`` that is its own
    authorization server (tokens are not bound to a resource: a recording proxy's URL is accepted)."""
    return {"auth_server_provider": Provider(),
            "auth": AuthSettings(issuer_url=AnyHttpUrl(origin),
                                 resource_server_url=AnyHttpUrl(f"{origin}/mcp"),
                                 client_registration_options=ClientRegistrationOptions(enabled=True),
                                 validate_token_resource=False)}


def oauth_http_client(url: str) -> Any:
    """An ``httpx2.AsyncClient`` carrying the SDK's own OAuth client for ``url`` (the MCP endpoint the
    client connects to): it discovers, registers, follows the authorization redirect itself (the fixture
    approves at once) and exchanges the code; tokens are kept in memory (``client.auth.context``).

    Returns:
        The client (use it as ``streamable_http_client(url, http_client=...)``).
    """
    import urllib.parse

    import httpx2
    from mcp.client.auth import OAuthClientProvider, TokenStorage
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    class Memory(TokenStorage):
        def __init__(self) -> None:
            self.tokens: OAuthToken | None = None
            self.client: OAuthClientInformationFull | None = None

        async def get_tokens(self) -> OAuthToken | None:
            return self.tokens

        async def set_tokens(self, tokens: OAuthToken) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return self.client

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            self.client = client_info

    got: dict[str, str | None] = {}

    async def redirect(authorization_url: str) -> None:
        async with httpx2.AsyncClient(trust_env=False) as http:
            answer = await http.get(authorization_url, follow_redirects=False)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(answer.headers["location"]).query)
        got["code"], got["state"] = query["code"][0], query.get("state", [None])[0]

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=got["code"] or "", state=got["state"])

    metadata = OAuthClientMetadata(redirect_uris=[AnyUrl("http://127.0.0.1:9/callback")], client_name="tests")
    provider = OAuthClientProvider(url, metadata, Memory(), redirect, callback)
    return httpx2.AsyncClient(auth=provider, trust_env=False)
