"""The 2026-07-28 operation drivers: multi round-trip requests and task polling, under fixed bounds.

One logical operation (``tools/call``, ``prompts/get``, ``resources/read``) may take several requests:

- *Input required* (MRTR): a result ``resultType: "input_required"`` carries ``inputRequests`` (keyed
  ``elicitation/create``, ``sampling/createMessage`` or ``roots/list`` requests) and/or an opaque
  ``requestState``.  Each input request is answered by the same handler that answers server-to-client
  requests in the legacy era (the battery's decline, a kind's stub answer), counted against the same
  bound (8 by default); the client then retries the same method under a new request id with
  ``inputResponses`` and the state echoed byte for byte (never inspected, never kept).  At most
  ``MAX_INPUT_ROUNDS`` rounds.  A handler that declines (an error ``Response``) ends the operation
  with that error: the revision has no way to refuse one input request.
- *Tasks* (the ``io.modelcontextprotocol/tasks`` extension): a result ``resultType: "task"`` is a task
  handle; the client polls ``tasks/get`` (honouring ``pollIntervalMs`` within 0.1-1 s) until a terminal
  status, answers ``input_required`` tasks through ``tasks/update``, and sends a best-effort
  ``tasks/cancel`` when the operation's deadline passes.  A completed task's ``result`` is the
  operation's result; a failed task's ``error`` its error.

Every request is charged to the run's budget and every wait ends at the operation's deadline, fixed
when its first request was sent.  ``Observed`` counts what the battery scores (content-free counters).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import jsonrpc
from .dispatch import SubRequests
from .messages import Response, RpcError

__all__ = ["CACHEABLE", "INPUT_METHODS", "MAX_INPUT_ROUNDS", "Observed", "TERMINAL", "settle"]

MAX_INPUT_ROUNDS = 10
INPUT_METHODS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling",
                 "roots/list": "roots"}
TERMINAL = frozenset({"completed", "failed", "cancelled"})
#: Methods whose complete results must carry cache hints (the revision's caching page).
CACHEABLE = frozenset({"server/discover", "tools/list", "prompts/list", "resources/list",
                       "resources/templates/list", "resources/read"})
_POLL_FLOOR_S, _POLL_CEILING_S = 0.1, 1.0
TOO_MANY_ROUNDS = "server asked for input more than 10 times in one operation"
BAD_INPUT = "MCP input_required result is malformed"
BAD_TASK = "MCP task handle or task state is malformed"
TASK_CANCELLED = -32800

#: ``exchange(method, params, deadline, subs) -> Response``: one request, awaited until ``deadline``.
Exchange = Callable[[str, Any, float, SubRequests], Response]


@dataclass
class Observed:
    """What a modern connection saw, as counts (never content), for the battery's checks.

    Attributes:
        results: results read from the server; ``untyped``: those without a string ``resultType``.
        lists: complete results of the cacheable methods (``server/discover``, the lists,
            ``resources/read``); ``unhinted``: those without a ``ttlMs`` >= 0 or a ``cacheScope`` of
            ``public``/``private`` (hints are read, never trusted: nothing is cached).
        input_rounds: ``input_required`` results answered; ``input_undeclared``: input requests for a
            capability the client did not declare; ``input_malformed``: input-required results without
            ``inputRequests`` or ``requestState`` (or with a malformed entry).
        tasks: task handles received; ``tasks_finished``: those that reached a terminal status;
        ``task_errors``: malformed task states or polls refused.
    """

    results: int = 0
    untyped: int = 0
    lists: int = 0
    unhinted: int = 0
    input_rounds: int = 0
    input_undeclared: int = 0
    input_malformed: int = 0
    tasks: int = 0
    tasks_finished: int = 0
    task_errors: int = 0

    def note(self, method: str, result: Any) -> None:
        """Count one result of a plain (non-operation) request: its type and, if cacheable, its hints."""
        if self.typed(result) == "complete" and method in CACHEABLE:
            self.lists += 1
            ttl = result.get("ttlMs") if isinstance(result, dict) else None
            scope = result.get("cacheScope") if isinstance(result, dict) else None
            valid = type(ttl) is int and ttl >= 0 and scope in ("public", "private")
            self.unhinted += not valid

    def add(self, other: Observed) -> None:
        """Add another connection's counts to these."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def typed(self, result: Any) -> str:
        """Count one result and return its ``resultType`` (``complete`` when absent)."""
        self.results += 1
        kind = result.get("resultType") if isinstance(result, dict) else None
        if not isinstance(kind, str):
            self.untyped += 1
            return "complete"
        return kind


def _answer(requests: Any, subs: SubRequests, declared: dict[str, Any], seen: Observed,
            skip: set[str]) -> dict[str, Any] | RpcError:
    """Answer every input request through ``subs`` (its bound counts); an error ends the operation."""
    answers: dict[str, Any] = {}
    for key, request in requests.items():
        if key in skip:
            continue
        method = request.get("method") if isinstance(request, dict) else None
        if not isinstance(key, str) or method not in INPUT_METHODS:
            seen.input_malformed += 1
            return RpcError(-32602, "malformed input request")
        if INPUT_METHODS[method] not in declared:
            seen.input_undeclared += 1
        subs.count += 1
        if subs.count > subs.bound:
            raise jsonrpc.failure(jsonrpc.SUB_REQUEST_FLOOD)
        reply = subs.handler(method, request.get("params"))
        if reply.error is not None:
            return reply.error
        answers[key] = reply.result
    return answers


def _retry_params(params: dict[str, Any], answers: dict[str, Any] | None, state: Any) -> dict[str, Any]:
    retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
    if answers is not None:
        retry["inputResponses"] = answers
    if isinstance(state, str):
        retry["requestState"] = state
    return retry


def _input_round(result: dict[str, Any], params: dict[str, Any], subs: SubRequests,
                 declared: dict[str, Any], seen: Observed) -> dict[str, Any] | RpcError:
    """The retry params for one ``input_required`` result, or the error that ends the operation."""
    seen.input_rounds += 1
    requests, state = result.get("inputRequests"), result.get("requestState")
    has_requests = isinstance(requests, dict) and bool(requests)
    if not has_requests and not isinstance(state, str):
        seen.input_malformed += 1
        raise jsonrpc.failure(BAD_INPUT)
    answers = _answer(requests, subs, declared, seen, set()) if has_requests else None
    if isinstance(answers, RpcError):
        return answers
    return _retry_params(params, answers, state)


def settle(exchange: Exchange, method: str, params: dict[str, Any], *, deadline: float, subs: SubRequests,
           declared: dict[str, Any], seen: Observed) -> Response:
    """Drive one modern operation to its final response.

    Args:
        exchange: sends one request and awaits its response (the session's bounded path).
        method: ``tools/call``, ``prompts/get`` or ``resources/read``.
        params: the request params (without ``_meta``; the session adds it to every request).
        deadline: the operation's deadline (a ``time.monotonic()`` instant).
        subs: the input-request handler and its bound (shared by every round).
        declared: the client capabilities sent (an input request for another one is counted).
        seen: the connection's counters.

    Returns:
        The final response: a complete result, the JSON-RPC error, a completed task's result or a failed
        task's error.

    Raises:
        TransportError: a limit broken (rounds, input requests, a malformed result), the deadline passed
            (``transport-timeout``), or a transport failure.
    """
    current = params
    for _ in range(MAX_INPUT_ROUNDS + 1):
        response = exchange(method, current, deadline, subs)
        if response.error is not None:
            return response
        kind = seen.typed(response.result)
        if kind == "task":
            return _follow_task(exchange, response.result, deadline, subs, declared, seen)
        if kind != "input_required":
            return response
        retry = _input_round(response.result, params, subs, declared, seen)
        if isinstance(retry, RpcError):
            return Response(error=retry)
        current = retry
    raise jsonrpc.failure(TOO_MANY_ROUNDS)


def _task_id(state: Any) -> str:
    task_id = state.get("taskId") if isinstance(state, dict) else None
    if not isinstance(task_id, str) or not task_id:
        raise jsonrpc.failure(BAD_TASK)
    return task_id


def _wait(state: dict[str, Any], deadline: float) -> None:
    interval = state.get("pollIntervalMs")
    seconds = interval / 1000 if isinstance(interval, int) and not isinstance(interval, bool) else 0.5
    time.sleep(max(0.0, min(max(seconds, _POLL_FLOOR_S), _POLL_CEILING_S, deadline - time.monotonic())))


def _terminal(state: dict[str, Any], seen: Observed) -> Response:
    seen.tasks_finished += 1
    status = state["status"]
    if status == "completed":
        return Response(result=state.get("result"))
    error = state.get("error")
    if status == "failed" and isinstance(error, dict) and type(error.get("code")) is int:
        text = error.get("message")
        return Response(error=RpcError(error["code"], text if isinstance(text, str) else "",
                                       error.get("data"), dict(error)))
    text = "task cancelled" if status == "cancelled" else "task failed"
    return Response(error=RpcError(TASK_CANCELLED, text))


def _follow_task(exchange: Exchange, handle: Any, deadline: float, subs: SubRequests,
                 declared: dict[str, Any], seen: Observed) -> Response:
    """Poll a task to a terminal status (or the deadline, then a best-effort ``tasks/cancel``)."""
    seen.tasks += 1
    task_id = _task_id(handle)
    state: dict[str, Any] = handle
    answered: set[str] = set()
    while state.get("status") not in TERMINAL:
        if time.monotonic() >= deadline:
            _cancel(exchange, task_id, subs)
            raise jsonrpc.timeout()
        _wait(state, deadline)
        polled = exchange("tasks/get", {"taskId": task_id}, deadline, subs)
        if polled.error is not None or not isinstance(polled.result, dict):
            seen.task_errors += 1
            return polled if polled.error is not None else Response(error=RpcError(-32603, "task lost"))
        seen.typed(polled.result)
        state = polled.result
        if _task_id(state) != task_id:
            seen.task_errors += 1
            raise jsonrpc.failure(BAD_TASK)
        if state.get("status") == "input_required":
            _update(exchange, task_id, state, subs, declared, seen, answered, deadline)
    return _terminal(state, seen)


def _update(exchange: Exchange, task_id: str, state: dict[str, Any], subs: SubRequests,
            declared: dict[str, Any], seen: Observed, answered: set[str], deadline: float) -> None:
    requests = state.get("inputRequests")
    if not isinstance(requests, dict):
        seen.task_errors += 1
        raise jsonrpc.failure(BAD_TASK)
    answers = _answer(requests, subs, declared, seen, answered)
    if isinstance(answers, RpcError) or not answers:
        return
    answered.update(answers)
    exchange("tasks/update", {"taskId": task_id, "inputResponses": answers}, deadline, subs)


def _cancel(exchange: Exchange, task_id: str, subs: SubRequests) -> None:
    try:
        exchange("tasks/cancel", {"taskId": task_id}, time.monotonic() + 1.0, subs)
    except Exception:  # best effort: the operation has already timed out
        return
