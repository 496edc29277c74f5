"""The echo fixture server (SPEC 17 ``echo_server.py``), newline-delimited JSON-RPC on stdio.

Behaviour: ``tools/list`` lists one tool ``navigate`` (input enum ``waitUntil`` in {commit, networkIdle});
``tools/call`` of ``boom`` answers error -32000 ``session 0be9b59c-af70-47b0-9169-d9de92330600 gone``;
anything else with an id answers ``{"echo": true}``; unparseable input is echoed byte for byte; messages
without an id are skipped.  Hidden tools for tests (never listed): ``tool_error`` (``isError: true``
result quoting ``arguments.message``), ``rpc_error`` (error ``arguments.code``, default -32001, quoting
``arguments.message``), ``notify`` (a ``notifications/message`` quoting ``arguments.message`` before
the result), ``reflect`` (the arguments back as text), ``big`` (a text of ``arguments.bytes`` bytes),
``environ`` (the names of its ``MCPEVAL*`` environment variables), ``banner`` (a non-JSON line before
the result), ``ask`` (a server-to-client request with the same id
before the result).

Modes (argv): ``--exit-code N`` writes ``fixture stderr exact`` to stderr and exits N; ``--signal SIG``
kills itself with SIG (a name such as ``TERM`` or a number); ``--duplex-stress LINES WIDTH SIZE`` writes
LINES lines of WIDTH bytes before reading one stdin line of exactly SIZE bytes, then answers ``{"read":
SIZE}``; ``--notify-burst N`` writes N small notifications and exits; ``--no-answers`` reads until end of
input and answers nothing; ``--exit-on-eof N`` exits N at end of input (default 0); ``--ignore-eof``
keeps running after end of input until signalled; ``--close-stdout`` answers the first message, then
closes its stdout and waits for a signal.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

BOOM = "session 0be9b59c-af70-47b0-9169-d9de92330600 gone"
NAVIGATE = {
    "name": "navigate",
    "description": "Open a page.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "url": {"type": "string"},
            "waitUntil": {"type": "string", "enum": ["commit", "networkIdle"]},
        },
    },
}


def _write(out: Any, message: dict[str, Any]) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def _text(text: str, *, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def _call(out: Any, msg_id: Any, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    args = params.get("arguments") or {}
    message = str(args.get("message", ""))
    if name == "boom":
        return {"error": {"code": -32000, "message": BOOM}}
    if name == "rpc_error":
        return {"error": {"code": args.get("code", -32001), "message": f"failed: {message}"}}
    if name == "tool_error":
        return {"result": _text(f"tool failed: {message}", is_error=True)}
    if name == "notify":
        _write(out, {"jsonrpc": "2.0", "method": "notifications/message",
                     "params": {"level": "info", "data": message}})
    if name == "reflect":
        return {"result": _text(json.dumps(args))}
    if name == "environ":
        return {"result": _text(json.dumps(sorted(k for k in os.environ if k.startswith("MCPEVAL"))))}
    if name == "big":
        return {"result": _text("x" * int(args.get("bytes", 0)))}
    if name == "banner":
        out.write(f"banner: {message}\n".encode())
        out.flush()
    if name == "ask":
        _write(out, {"jsonrpc": "2.0", "id": msg_id, "method": "sampling/createMessage", "params": {}})
    if name == "mrtr":
        return {"result": mrtr_result(msg_id, params)}
    return {"result": {"echo": True}}


def mrtr_result(msg_id: Any, params: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 multi round-trip answer: ``input_required`` (state ``s-<id>``) to a call without a
    ``requestState``, the final result to its retry."""
    if "requestState" in params:
        return {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}
    question = {"method": "elicitation/create",
                "params": {"mode": "form", "message": "?", "requestedSchema": {"type": "object"}}}
    return {"resultType": "input_required", "requestState": f"s-{msg_id}", "inputRequests": {"q": question}}


def _answer(out: Any, line: bytes) -> None:
    try:
        msg = json.loads(line)
    except ValueError:
        out.write(line)
        out.flush()
        return
    if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
        return
    raw = msg.get("params")
    params: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if msg["method"] == "tools/list":
        body: dict[str, Any] = {"result": {"tools": [NAVIGATE]}}
    elif msg["method"] == "tools/call":
        body = _call(out, msg["id"], params)
    else:
        body = {"result": {"echo": True}}
    _write(out, {"jsonrpc": "2.0", "id": msg["id"], **body})


def _duplex(out: Any, lines: int, width: int, size: int) -> None:
    row = b"x" * (width - 1) + b"\n"
    for _ in range(lines):
        out.write(row)
    out.flush()
    line = sys.stdin.buffer.readline()
    _write(out, {"jsonrpc": "2.0", "id": 1, "result": {"read": len(line)}})
    if len(line) != size:
        sys.exit(5)


def main(argv: list[str]) -> int:
    """Run the echo server; returns its exit code."""
    out = sys.stdout.buffer
    if argv[:1] == ["--exit-code"]:
        sys.stderr.write("fixture stderr exact\n")
        sys.stderr.flush()
        return int(argv[1])
    if argv[:1] == ["--signal"]:
        name = argv[1]
        signum = int(name) if name.isdigit() else int(getattr(signal, "SIG" + name.removeprefix("SIG")))
        os.kill(os.getpid(), signum)
        time.sleep(5)
        return 1
    if argv[:1] == ["--duplex-stress"]:
        _duplex(out, int(argv[1]), int(argv[2]), int(argv[3]))
        return 0
    if argv[:1] == ["--notify-burst"]:
        note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"n"}}\n'
        for _ in range(int(argv[1])):
            out.write(note)
        out.flush()
        return 0
    if argv[:1] == ["--no-answers"]:
        for _line in sys.stdin.buffer:
            pass
        return 0
    for line in sys.stdin.buffer:
        _answer(out, line)
        if "--close-stdout" in argv:
            out.flush()
            os.close(1)  # sys.stdout does not own descriptor 1: close the descriptor itself
            signal.pause()
    if "--ignore-eof" in argv:
        signal.pause()
    if argv[:1] == ["--exit-on-eof"]:
        return int(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
