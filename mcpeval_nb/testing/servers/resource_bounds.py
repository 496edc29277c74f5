"""Fixture server that breaks the probe client's resource bounds (SPEC 17 ``resource_bounds_server``).

Run ``python -m mcpeval_nb.testing.servers.resource_bounds MODE [ARG]``.  ``initialize`` is answered
normally in every mode that reads; every other request gets the mode's behaviour.  Output carries the
marker ``CANARY`` so tests can check that no frame content reaches an error message.

Modes (SPEC 17 first, then the extra ones the transport tests need):

- ``no-read [SECONDS]``: never reads stdin, sleeps (default 10 s): the client's writes must time out.
- ``oversized``: answers with ``CANARY`` and 4 MiB of ``x`` (a frame over the 4 MiB bound).
- ``interleaved``: streams ``notifications/progress`` every 10 ms for 2 s and never answers.
- ``notifications [N]``: N (default 140) notifications, then the answer (over 128 overflows the buffer).
- ``pid``: answers ``{"pid": <its pid>}``.
- ``notification-bytes``: five 1 MiB notifications, then the answer (the 4 MiB byte bound overflows).
- ``frame N``: answers with a frame of exactly N bytes, newline included.
- ``banner``: writes non-JSON lines and non-2.0 JSON before each answer (all skipped by the client).
- ``mismatched-id``: answers with the request id plus one.
- ``late [SECONDS]``: answers its first request after a delay (default 0.6 s); ``late-twice`` sends
  that late answer twice.
- ``sub-requests N``: before answering, sends N ``sampling/createMessage`` requests and waits for each
  reply; the answer lists the error codes it got back.
- ``flood [PAD]``: writes 40 notifications (each padded with PAD bytes) at start, before reading.
- ``grandchild``: starts a sleeping child process and answers ``{"pid": ..., "child": ...}``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

CANARY = "CANARY-resource-bounds-7f3a"
MIB = 1024 * 1024


def _write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _note(index: int, pad: int = 0) -> dict[str, Any]:
    params: dict[str, Any] = {"progressToken": CANARY, "progress": index}
    if pad:
        params["message"] = CANARY + "x" * pad
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


def _answer(request_id: Any, result: Any) -> None:
    _write({"jsonrpc": "2.0", "id": request_id, "result": result})


def _exact_frame(request_id: Any, size: int) -> None:
    head = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"pad": ""}})
    pad = size - len(head) - 1
    sys.stdout.write(head.replace('"pad": ""', '"pad": "' + "x" * pad + '"') + "\n")
    sys.stdout.flush()


def _sub_requests(count: int) -> list[Any]:
    codes: list[Any] = []
    for index in range(count):
        _write({"jsonrpc": "2.0", "id": f"s{index}", "method": "sampling/createMessage",
                "params": {"messages": [{"role": "user", "content": {"type": "text", "text": CANARY}}]}})
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        reply = json.loads(line)
        codes.append(reply.get("error", {}).get("code") if "error" in reply else "result")
    return codes


def _handle(mode: str, arg: str | None, request_id: Any, state: dict[str, int]) -> None:
    state["count"] += 1
    if mode == "oversized":
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"text": CANARY}})
        sys.stdout.write(body.replace(CANARY, CANARY + "x" * (4 * MIB)) + "\n")
        sys.stdout.flush()
    elif mode == "interleaved":
        for index in range(200):
            _write(_note(index))
            time.sleep(0.01)
    elif mode in ("notifications", "notification-bytes"):
        count, pad = (int(arg or "140"), 0) if mode == "notifications" else (5, MIB)
        for index in range(count):
            _write(_note(index, pad))
        _answer(request_id, {"text": CANARY})
    elif mode == "frame":
        _exact_frame(request_id, int(arg or "100"))
    elif mode == "banner":
        sys.stdout.write(f"{CANARY} starting up\nnot json at all\n")
        _write({"jsonrpc": "1.0", "id": request_id, "result": CANARY})
        _write({"id": request_id, "result": CANARY})
        _answer(request_id, {"ok": True})
    elif mode == "mismatched-id":
        _answer(request_id + 1 if isinstance(request_id, int) else CANARY, {"text": CANARY})
    elif mode in ("late", "late-twice"):
        if state["count"] == 1:
            time.sleep(float(arg or "0.6"))
            for _ in range(2 if mode == "late-twice" else 1):
                _answer(request_id, {"text": CANARY, "late": True})
        else:
            _answer(request_id, {"late": False})
    elif mode == "sub-requests":
        _answer(request_id, {"codes": _sub_requests(int(arg or "1"))})
    elif mode == "grandchild":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        _answer(request_id, {"pid": os.getpid(), "child": child.pid})
    else:  # pid, flood
        _answer(request_id, {"pid": os.getpid()})


def main(argv: list[str]) -> int:
    """Run the fixture in the mode named by ``argv[0]``."""
    mode = argv[0] if argv else "pid"
    arg = argv[1] if len(argv) > 1 else None
    if mode == "no-read":
        time.sleep(float(arg or "10"))
        return 0
    if mode == "flood":
        for index in range(40):
            _write(_note(index, int(arg or "0")))
    state = {"count": 0}
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        if message["method"] == "initialize":
            _answer(message["id"], {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "resource-bounds", "version": "1"}})
            continue
        _handle(mode, arg, message["id"], state)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
