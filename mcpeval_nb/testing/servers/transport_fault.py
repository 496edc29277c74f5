"""Fixture server whose tools fail at the transport level (SPEC 17 ``transport_fault_server``).

Run ``python -m mcpeval_nb.testing.servers.transport_fault [CRASH_TOOL ...]``.  Tools: ``ok`` (answers
a text result carrying a canary), ``slow`` (sleeps ``arguments.ms`` milliseconds, then answers), ``crash``
(exits with status 3 without answering), plus every name given in argv, which also crash.  ``ping``
answers ``{}``; unknown methods -32601; unknown tools -32602.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

CANARY = "CANARY-transport-fault-41c9"
_OBJECT = {"type": "object", "properties": {}}


def _tools(crashers: list[str]) -> list[dict[str, Any]]:
    tools = [
        {"name": "ok", "description": f"{CANARY} description", "inputSchema": _OBJECT,
         "annotations": {"readOnlyHint": True}},
        {"name": "slow", "inputSchema": {"type": "object", "properties": {"ms": {"type": "integer"}}},
         "annotations": {"readOnlyHint": True}},
        {"name": "crash", "inputSchema": _OBJECT, "annotations": {"readOnlyHint": True}},
    ]
    tools += [{"name": name, "inputSchema": _OBJECT, "annotations": {"readOnlyHint": True}}
              for name in crashers if name not in ("ok", "slow", "crash")]
    return tools


def _reply(request_id: Any, *, result: Any = None, error: dict[str, Any] | None = None) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    if error is None:
        message["result"] = result
    else:
        message["error"] = error
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _call(request_id: Any, params: dict[str, Any], crashers: list[str]) -> None:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "crash" or name in crashers:
        sys.exit(3)
    if name == "slow":
        time.sleep(int(arguments.get("ms", 0)) / 1000)
    if name in ("ok", "slow"):
        _reply(request_id, result={"content": [{"type": "text", "text": f"{CANARY} result"}]})
    else:
        _reply(request_id, error={"code": -32602, "message": f"{CANARY} unknown tool"})


def main(argv: list[str]) -> int:
    """Serve until stdin closes or a crashing tool is called."""
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        method, request_id = message["method"], message["id"]
        if method == "initialize":
            _reply(request_id, result={"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                       "serverInfo": {"name": "transport-fault", "version": "1"}})
        elif method == "tools/list":
            _reply(request_id, result={"tools": _tools(argv)})
        elif method == "tools/call":
            _call(request_id, message.get("params") or {}, argv)
        elif method == "ping":
            _reply(request_id, result={})
        else:
            _reply(request_id, error={"code": -32601, "message": "method not found"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
