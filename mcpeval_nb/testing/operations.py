"""A store of 2026-07-28 traffic written the way a shim writes it: frames through the real correlator,
records through the real writer.

``operations_store(root)`` captures, deterministically, plain modern calls, multi round-trip requests
(several questions, a person answering each after some seconds), task-augmented calls (completed, failed,
cancelled), an operation the client abandoned, a retry whose ``requestState`` was tampered with, and a
little legacy traffic beside it.  Canary strings sit in every opaque value (arguments, requestState,
answers, task ids and results): ``CANARY`` must never reach the store.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from ..capture.correlate import Correlator, classify_frame
from ..journal import append_records
from ..privacy.records import CallRecord
from ..root import Root

__all__ = ["CANARY", "operations_store"]

CANARY = "CANARY-ops-31f9"
_VERSION = "2026-07-28"
_META = {"io.modelcontextprotocol/protocolVersion": _VERSION,
         "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}


class _Wire:
    def __init__(self, correlator: Correlator, start_ms: int) -> None:
        self.c, self.now, self.ids = correlator, start_ms, 0
        self.records: list[CallRecord] = []

    def send(self, direction: str, msg: dict[str, Any], after_ms: int = 0) -> None:
        self.now += after_ms
        frame = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        self.records += self.c.observe(direction, classify_frame(frame), now_ms=self.now)

    def request(self, method: str, params: dict[str, Any], after_ms: int = 1) -> int:
        self.ids += 1
        self.send("outbound", {"id": self.ids, "method": method, "params": params}, after_ms)
        return self.ids

    def answer(self, msg_id: int, result: dict[str, Any], after_ms: int) -> None:
        self.send("inbound", {"id": msg_id, "result": result}, after_ms)


def _call(tool: str, state: str | None = None, answered: bool = False, **arguments: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments, "_meta": _META}
    if state is not None:
        params["requestState"] = state
    if answered:
        params["inputResponses"] = {"q": {"action": "accept", "content": {"answer": CANARY}}}
    return params


def _ask(wire: _Wire, rng: random.Random, *, rounds: int, tamper: bool = False,
         abandon: bool = False) -> None:
    msg_id = wire.request("tools/call", _call("ask", topic=CANARY))
    for n in range(1, rounds):
        state = f"{CANARY}-state-{msg_id}-{n}"
        wire.answer(msg_id, {"resultType": "input_required", "requestState": state, "inputRequests": {
            "q": {"method": "elicitation/create", "params": {"message": CANARY}}}}, rng.randint(20, 80))
        if abandon:
            return
        sent = state + ("x" if tamper else "")
        msg_id = wire.request("tools/call", _call("ask", sent, True, topic=CANARY), rng.randint(1500, 9000))
        if tamper:
            wire.send("inbound", {"id": msg_id, "error": {"code": -32602, "message": CANARY}}, 5)
            return
    wire.answer(msg_id, {"resultType": "complete", "content": [{"type": "text", "text": CANARY}]},
                rng.randint(20, 120))


def _job(wire: _Wire, rng: random.Random, end: str) -> None:
    task = f"{CANARY}-task-{wire.ids}"
    msg_id = wire.request("tools/call", _call("job", ms=3000, note=CANARY))
    wire.answer(msg_id, {"resultType": "task", "taskId": task, "status": "working"}, 15)
    for _ in range(rng.randint(2, 5)):
        poll = wire.request("tasks/get", {"taskId": task, "_meta": _META}, rng.randint(300, 900))
        wire.answer(poll, {"resultType": "complete", "taskId": task, "status": "working"}, 3)
    method = "tasks/cancel" if end == "cancelled" else "tasks/get"
    final = wire.request(method, {"taskId": task, "_meta": _META}, 400)
    view: dict[str, Any] = {"resultType": "complete", "taskId": task, "status": end}
    if end == "completed":
        view["result"] = {"content": [{"type": "text", "text": CANARY}], "isError": False}
    if end == "failed":
        view["error"] = {"code": -32603, "message": CANARY}
    wire.answer(final, view, 4)


def operations_store(root: Path | str, *, operations: int = 24, seed: int = 0,
                     start_ms: int = 1_785_830_400_000) -> list[CallRecord]:
    """Write a capture of modern operations (and some legacy calls) to ``root``; returns the records.

    Args:
        root: the capture root (created as needed).
        operations: multi round-trip requests and tasks to capture (plain calls come with them).
        seed: the random seed (waits, rounds, latencies).
        start_ms: the capture's start (ms since the epoch; default 2026-08-04T00:00Z).
    """
    rng = random.Random(seed)
    home = Root.of(Path(root))
    wire = _Wire(Correlator(server="eras", session=f"ops-{seed}", salt=home.salt()), start_ms)
    for n in range(operations):
        kind = n % 6
        if kind in (0, 1):
            _ask(wire, rng, rounds=rng.randint(2, 4))
        elif kind == 2:
            _job(wire, rng, ("completed", "completed", "failed", "cancelled")[rng.randrange(4)])
        elif kind == 3:
            _ask(wire, rng, rounds=2, tamper=n % 12 == 3, abandon=n % 12 == 9)
        else:
            msg_id = wire.request("tools/call", _call("echo", text=CANARY) if kind == 4 else
                                  {"name": "search", "arguments": {"q": CANARY}})  # kind 5: a legacy call
            wire.answer(msg_id, {"content": [{"type": "text", "text": CANARY}]}, rng.randint(5, 60))
    records = wire.records + wire.c.close(now_ms=wire.now)
    append_records(home.path, records)
    return records
