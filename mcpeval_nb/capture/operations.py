"""Operations that span several requests: multi round-trip requests (SEP-2322) and tasks (SEP-2663).

A ``tools/call`` (or ``prompts/get``, ``resources/read``) answered ``resultType: "input_required"`` is not
over: the client retries it under a new request id with ``inputResponses`` and the ``requestState`` it was
given, maybe several times.  A call answered with a task handle (``resultType: "task"``) is over when
``tasks/get`` (or ``tasks/cancel``) reports a terminal status.  Each is one *operation* and gives one call
record (docs/capture.md, "One operation, one record"): the first request's method, tool and arguments,
the final outcome, the number of rounds, the latency from the first request to the final answer and the
time the server spent waiting on the client.

Rounds are linked by keyed digests (``wire.Keyer``), never by the opaque values themselves: a retry is
matched to the operation that issued its ``requestState``; failing that, to the latest waiting operation
with the same method, target and arguments, and flagged ``state-changed`` (it carries another state),
``state-dropped`` (it carries none although one was issued) or ``state-invented`` (it carries one although
none was issued).  Task polls are matched by the task id's digest.

Waiting operations are bounded (count and bytes, as pending requests are); an operation its client
never finishes is journaled as abandoned (``unknown``, ``error.code`` ``capture-operation-abandoned``) when
it is pushed out by the bound, when it waited longer than ``OPERATION_IDLE_S``, or when capture ends.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..limits import MAX_OPEN_OPERATION_BYTES, MAX_OPEN_OPERATIONS, OPERATION_IDLE_S
from .pending import ENTRY_OVERHEAD, Pending
from .wire import NO_FACTS, TASK_METHODS, RequestFacts

__all__ = ["Operation", "Operations", "ext_fields"]

_IDS = itertools.count(1)


@dataclass(slots=True)
class Operation:
    """One multi-request operation, from its first request on (content-free: digests and counts only).

    Attributes:
        method, tool, args_json: the first request's method, tool and shaped arguments.
        start_ms: when the first request was read.
        overhead_us: the shim's time over every round.
        rounds: requests of the operation's own method (1 for the first).
        wait_ms: time from each answer handing the client a question to the client's next request.
        polls: ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` requests.
        flags: content-free flags (``privacy.ext.FLAGS``).
        facts: the first request's facts (protocol and trace context from a later round when it had
            none).
        fingerprint: digest of method, target and arguments.
        state: digest of the last ``requestState`` the server issued (None: none issued).
        task: digest of the task id (task operations), status: the task's last status.
        result_type: the last answer's ``resultType``.
        last_ms: when the server last answered (the client is waiting on nothing since).
        asked_ms: when a task first reported ``input_required`` since its last ``tasks/update``.
    """

    method: str
    tool: str | None
    args_json: str | None
    start_ms: int
    overhead_us: int = 0
    rounds: int = 1
    wait_ms: int = 0
    polls: int = 0
    flags: set[str] = field(default_factory=set)
    facts: RequestFacts = NO_FACTS
    fingerprint: bytes | None = None
    state: bytes | None = None
    task: bytes | None = None
    status: str | None = None
    result_type: str = "complete"
    last_ms: int = 0
    asked_ms: int | None = None
    ident: int = field(default_factory=lambda: next(_IDS))

    @classmethod
    def first(cls, p: Pending) -> Operation:
        """The operation a request starts (its first round)."""
        return cls(p.method, p.tool, p.args_json, p.sent_ms, facts=p.facts, fingerprint=p.facts.fingerprint,
                   flags=set(p.flags))

    def join(self, p: Pending) -> None:
        """Take a later request's facts: the protocol and trace context when the first had none."""
        mine, later = self.facts, p.facts
        if (mine.protocol is None and later.protocol) or (mine.trace is None and later.trace):
            self.facts = dataclasses.replace(mine, protocol=mine.protocol or later.protocol,
                                             trace=mine.trace or later.trace,
                                             request_id=mine.request_id or later.request_id)
        self.flags |= p.flags

    @property
    def size(self) -> int:
        """Bytes this operation is accounted for while it waits."""
        return ENTRY_OVERHEAD * 2 + len(self.args_json or "")


class Operations:
    """The operations waiting on their client, bounded and indexed by digest.

    Args:
        max_open: the most waiting operations.
        max_bytes: the most bytes of them (``Operation.size``).
        idle_ms: a waiting operation older than this (since the server's last answer) is abandoned.
    """

    def __init__(self, *, max_open: int = MAX_OPEN_OPERATIONS, max_bytes: int = MAX_OPEN_OPERATION_BYTES,
                 idle_ms: int = int(OPERATION_IDLE_S * 1000)) -> None:
        self.max_open, self.max_bytes, self.idle_ms = max_open, max_bytes, idle_ms
        self.bytes = 0
        self._waiting: OrderedDict[int, Operation] = OrderedDict()
        self._by_state: dict[bytes, int] = {}
        self._by_fingerprint: dict[bytes, list[int]] = {}
        self._by_task: dict[bytes, int] = {}

    def __len__(self) -> int:
        return len(self._waiting)

    def resume(self, facts: RequestFacts, method: str, now_ms: int) -> tuple[Operation | None, set[str]]:
        """The waiting operation a request continues, and the flags the request earns.

        A task poll (``tasks/*``) returns its task's operation, which keeps waiting; a multi round-trip
        retry returns its operation taken out of the waiting table (its new round is in flight).

        Args:
            facts: the request's facts.
            method: its method.
            now_ms: when it was read.
        """
        if method in TASK_METHODS:
            return self._poll(facts, method, now_ms), set()
        if not facts.retry:
            return None, set()
        op, flags = self._retry_of(facts)
        if op is None:
            return None, flags
        self._remove(op)
        op.rounds += 1
        op.wait_ms += max(0, now_ms - op.last_ms)
        op.flags |= flags
        return op, set()

    def _poll(self, facts: RequestFacts, method: str, now_ms: int) -> Operation | None:
        ident = None if facts.task is None else self._by_task.get(facts.task)
        op = None if ident is None else self._waiting.get(ident)
        if op is None:
            return None
        op.polls += 1
        if method == "tasks/update" and op.asked_ms is not None:
            op.wait_ms += max(0, now_ms - op.asked_ms)
            op.asked_ms = None
        return op

    def _retry_of(self, facts: RequestFacts) -> tuple[Operation | None, set[str]]:
        if facts.state is not None and (ident := self._by_state.get(facts.state)) is not None:
            return self._waiting[ident], set()
        idents = self._by_fingerprint.get(facts.fingerprint, []) if facts.fingerprint else []
        op = self._waiting[idents[-1]] if idents else None
        if op is None:
            return None, {"state-invented"} if facts.state is not None else set()
        if facts.state is None:
            return op, {"state-dropped"} if op.state is not None else set()
        return op, {"state-changed" if op.state is not None else "state-invented"}

    def wait(self, op: Operation, now_ms: int) -> list[Operation]:
        """Put ``op`` in the table until its client continues it (or again, after a poll's answer).

        Returns:
            Operations pushed out to keep the table within its bounds (oldest first): abandoned.
        """
        op.last_ms = now_ms
        if op.ident in self._waiting:
            self._waiting.move_to_end(op.ident)
            return []
        self._waiting[op.ident] = op
        self.bytes += op.size
        if op.task is not None:
            self._by_task[op.task] = op.ident
        else:
            if op.state is not None:
                self._by_state[op.state] = op.ident
            if op.fingerprint is not None:
                self._by_fingerprint.setdefault(op.fingerprint, []).append(op.ident)
        evicted = []
        while len(self._waiting) > 1 and (len(self._waiting) > self.max_open or self.bytes > self.max_bytes):
            evicted.append(self._remove(next(iter(self._waiting.values()))))
        return evicted

    def done(self, op: Operation) -> None:
        """``op`` is over (a terminal answer): forget it."""
        if op.ident in self._waiting:
            self._remove(op)

    def expired(self, now_ms: int) -> list[Operation]:
        """Waiting operations the server last answered more than ``idle_ms`` ago, removed: abandoned."""
        out = []
        while self._waiting:
            oldest = next(iter(self._waiting.values()))
            if now_ms - oldest.last_ms <= self.idle_ms:
                break
            out.append(self._remove(oldest))
        return out

    def drain(self) -> list[Operation]:
        """Every waiting operation, removed (capture is ending): abandoned."""
        return [self._remove(op) for op in list(self._waiting.values())]

    def _remove(self, op: Operation) -> Operation:
        del self._waiting[op.ident]
        self.bytes -= op.size
        _forget(self._by_state, op.state, op.ident)
        _forget(self._by_task, op.task, op.ident)
        if op.fingerprint is not None and (idents := self._by_fingerprint.get(op.fingerprint)):
            if op.ident in idents:
                idents.remove(op.ident)
            if not idents:
                del self._by_fingerprint[op.fingerprint]
        return op


def _forget(index: dict[bytes, int], key: bytes | None, ident: int) -> None:
    if key is not None and index.get(key) == ident:
        del index[key]


def ext_fields(op: Operation) -> dict[str, Any]:
    """The ``ext`` members an operation's record carries (``privacy.ext``), before transport fields."""
    ext: dict[str, Any] = {}
    if op.rounds > 1:
        ext["rounds"] = op.rounds
    if op.rounds > 1 or op.wait_ms or op.task is not None:
        ext["wait_ms"] = op.wait_ms
    if op.task is not None:
        ext["polls"] = op.polls
        if op.status is not None:
            ext["task"] = op.status
    if op.result_type != "complete":
        ext["result_type"] = op.result_type
    return ext
