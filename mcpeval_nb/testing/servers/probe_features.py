"""Fixture: one server reaching the feature reasons of SPEC 8.3 (written for mcpeval-nb's tests).

Tools (behaviour by name): ``sample_ok|sample_invalid|sample_flood|sample_stall`` and the same four
``elicit_*`` (server-to-client requests during the call); ``cancel_honor|cancel_code|cancel_ignore|
cancel_error`` (0.3 s of work; on ``notifications/cancelled``: silence, -32800, keep going, -32603);
``out_ok|out_missing|out_field_missing|out_invalid|out_ref|out_none`` (output schemas); ``trigger``
(sends ``notifications/resources/updated`` for ``arguments.uri``); ``slow`` (sleeps ``arguments.ms``),
``crash`` (exits 3), ``garbage`` (answers with both result and error).  Every result and error carries a
CANARY marker.  Resources: ``fixture://ok`` (notified on trigger), ``fixture://auto`` (notified right
after subscribe), ``fixture://silent``, ``fixture://unreadable``, ``fixture://nosub``.  Completion
prompts: ``greet`` (argument ``name``), ``malformed``, ``flood``, ``stall``.

Modes (first argument): ``full`` (default: tools, resources with subscribe, prompts, completions),
``bare`` (tools only), ``echo`` (echoes any protocol version), ``bad-version`` (answers ``latest`` to
an unknown version), ``inconsistent`` (claims ``2024-11-05`` but refuses it on the next handshake),
``surfaces-bad`` (resources/list lacks its array), ``surfaces-stalled`` (prompts/list never ends).
"""

from __future__ import annotations

import sys
import time
from typing import Any

if __package__:
    from ._mcp import CANARY_TEXT, Context, Fail, Server, text_result
else:  # run by path (fast start: the package is not imported)
    from _mcp import (  # type: ignore[no-redef,import-not-found,unused-ignore]
        CANARY_TEXT,
        Context,
        Fail,
        Server,
        text_result,
    )

FULL_CAPS = {"tools": {}, "resources": {"subscribe": True}, "prompts": {}, "completions": {}}
SCHEMA = {"type": "object", "properties": {"count": {"type": "integer"}, "label": {"type": "string"}},
          "required": ["count", "label"]}
REF_SCHEMA = {"type": "object", "properties": {"item": {"$ref": "#/$defs/item"}}, "required": ["item"],
              "$defs": {"item": {"type": "object", "properties": {"n": {"type": "integer"}}}}}
SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": CANARY_TEXT}}], "maxTokens": 8}
ELICIT = {"message": CANARY_TEXT, "requestedSchema": {"type": "object",
                                                      "properties": {"name": {"type": "string"}}}}


def _asking(method: str, params: Any, behaviour: str) -> Any:
    def handler(args: Any, ctx: Context) -> Any:
        count = 5 if behaviour == "flood" else 1
        for _ in range(count):
            ctx.ask(method, {} if behaviour == "invalid" else params)
        if behaviour == "stall":
            ctx.sleep(60)
            return None
        return text_result()
    return handler


def _cancellable(behaviour: str) -> Any:
    def handler(args: Any, ctx: Context) -> Any:
        end = time.monotonic() + 0.3
        cancelled = ctx.sleep(0.3)
        if not cancelled or behaviour == "ignore":
            time.sleep(max(0.0, end - time.monotonic()))
            return text_result()
        if behaviour == "code":
            raise Fail(-32800, "request cancelled")
        if behaviour == "error":
            raise Fail(-32603)
        return None
    return handler


def _output(kind: str) -> Any:
    content = {"out_ok": {"count": 1, "label": "x"}, "out_field_missing": {"count": 1},
               "out_invalid": {"count": "many", "label": "x"}, "out_ref": {"item": {"n": 2}},
               "out_none": {"count": 1, "label": "x"}}.get(kind)

    def handler(args: Any, ctx: Context) -> Any:
        return text_result() if content is None else text_result(structuredContent=content)
    return handler


def _tools(server: Server) -> None:
    for prefix, method, params in (("sample", "sampling/createMessage", SAMPLE),
                                   ("elicit", "elicitation/create", ELICIT)):
        for behaviour in ("ok", "invalid", "flood", "stall"):
            server.tool(f"{prefix}_{behaviour}", _asking(method, params, behaviour))
    for behaviour in ("honor", "code", "ignore", "error"):
        server.tool(f"cancel_{behaviour}", _cancellable(behaviour))
    for kind in ("out_ok", "out_missing", "out_field_missing", "out_invalid", "out_ref", "out_none"):
        extra: dict[str, Any] = {} if kind == "out_none" else {
            "outputSchema": REF_SCHEMA if kind == "out_ref" else SCHEMA}
        server.tool(kind, _output(kind), **extra)

    def trigger(args: Any, ctx: Context) -> Any:
        ctx.notify("notifications/resources/updated", {"uri": args.get("uri")})
        return text_result()

    def slow(args: Any, ctx: Context) -> Any:
        ms = args.get("ms")
        if ctx.sleep(ms / 1000 if isinstance(ms, int | float) else 1.0):
            return None
        return text_result()

    def crash(args: Any, ctx: Context) -> Any:
        sys.exit(3)

    def garbage(args: Any, ctx: Context) -> Any:
        server.write({"jsonrpc": "2.0", "id": ctx.request_id, "result": {}, "error": {"code": 1,
                                                                                     "message": CANARY_TEXT}})
        return None

    server.tool("trigger", trigger, properties={"uri": {"type": "string"}})
    server.tool("slow", slow, properties={"ms": {"type": "integer"}})
    server.tool("crash", crash)
    server.tool("garbage", garbage)


def _resources(server: Server, mode: str) -> None:
    def read(params: Any, ctx: Context) -> Any:
        uri = params.get("uri")
        if uri == "fixture://unreadable" or not str(uri).startswith("fixture://"):
            raise Fail(-32002)
        return {"contents": [{"uri": uri, "text": CANARY_TEXT}]}

    def subscribe(params: Any, ctx: Context) -> Any:
        uri = params.get("uri")
        if uri == "fixture://nosub":
            raise Fail(-32603)
        if uri == "fixture://auto":
            later = {"jsonrpc": "2.0", "id": "internal", "method": "mcpeval-fixture/notify",
                     "params": {"uri": uri}}
            server.backlog.append(later)
        return {}

    def listing(params: Any, ctx: Context) -> Any:
        if mode == "surfaces-bad":
            return {"items": []}
        return {"resources": [{"uri": "fixture://ok", "name": "ok"}]}

    def prompts(params: Any, ctx: Context) -> Any:
        if mode == "surfaces-stalled":
            return {"prompts": [], "nextCursor": "again"}
        return {"prompts": [{"name": "greet", "arguments": [{"name": "name"}]}]}

    def notify_later(params: Any, ctx: Context) -> Any:
        ctx.notify("notifications/resources/updated", {"uri": params.get("uri")})
        return None

    server.methods.update({"resources/read": read, "resources/subscribe": subscribe,
                           "resources/unsubscribe": lambda p, c: {}, "resources/list": listing,
                           "prompts/list": prompts, "completion/complete": _complete})
    server.methods["mcpeval-fixture/notify"] = notify_later


def _complete(params: Any, ctx: Context) -> Any:
    ref = params.get("ref") if isinstance(params, dict) else {}
    argument = params.get("argument") if isinstance(params, dict) else {}
    name = ref.get("name") if isinstance(ref, dict) else None
    if name == "stall":
        ctx.sleep(60)
        return None
    if name == "malformed":
        return {"completion": {}}
    if name == "flood":
        return {"completion": {"values": [f"v{i}" for i in range(50)]}}
    if name == "greet" and isinstance(argument, dict) and argument.get("name") != "name":
        raise Fail(-32602, "unknown argument", data={"argument": argument.get("name")})
    return {"completion": {"values": ["alpha", "beta"]}}


def build(mode: str) -> Server:
    """The features server for ``mode``."""
    caps = {"tools": {}} if mode == "bare" else dict(FULL_CAPS)
    server = Server("probe-features", capabilities=caps, version=None if mode == "echo" else "2025-06-18")
    _tools(server)
    _resources(server, mode)
    base = server.methods["initialize"]

    def initialize(params: Any, ctx: Context) -> Any:
        offered = params.get("protocolVersion") if isinstance(params, dict) else None
        result = dict(base(params, ctx))
        if offered != "2025-06-18" and mode == "bad-version":
            result["protocolVersion"] = "latest"
        if mode == "inconsistent" and offered != "2025-06-18":
            result["protocolVersion"] = "2024-11-05" if offered != "2024-11-05" else "2025-06-18"
        return result

    server.methods["initialize"] = initialize
    return server


if __name__ == "__main__":
    build(sys.argv[1] if len(sys.argv) > 1 else "full").run()
