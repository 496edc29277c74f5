"""The Tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) for the ``sdk_eras`` fixture, both sides.

Server side (``TasksExtension``): a ``tools/call`` of ``job`` from a modern client that declares the
extension is answered with a task handle (``resultType: "task"``) instead of its result; ``tasks/get``
reports ``working`` until the job's ``ms`` have passed, then its end state; ``tasks/update`` answers an
``input_required`` task (which then completes); ``tasks/cancel`` cancels a task that has not ended.  A
task's state is computed from its clock when asked, so a stateless HTTP server keeps it in memory only.

Client side (``TasksClient``): the SDK client's extension claim that polls ``tasks/get`` (answering an
``input_required`` task once with ``tasks/update``) until a terminal status and hands the final
``CallToolResult`` back to ``Client.call_tool``; ``cancel_after`` polls cancels it instead.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolRequestParams, CallToolResult, RequestParams, Result, TextContent
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict, Field

__all__ = ["IDENTIFIER", "TasksClient", "TasksExtension"]

IDENTIFIER = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")


class TaskParams(RequestParams):
    """``tasks/get`` and ``tasks/cancel`` parameters."""

    model_config = ConfigDict(extra="allow")
    taskId: str


class UpdateParams(TaskParams):
    """``tasks/update`` parameters."""

    inputResponses: dict[str, Any] = Field(default_factory=dict)


@dataclass
class _Task:
    ends_at: float
    end: str
    note: str
    cancelled: bool = False
    answered: bool = False
    created: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))

    def status(self) -> str:
        if self.cancelled:
            return "cancelled"
        if time.monotonic() < self.ends_at:
            return "working"
        if self.end == "input_required" and not self.answered:
            return "input_required"
        return "failed" if self.end == "failed" else "completed"


class TasksExtension(Extension):
    """The server half: ``job`` becomes a task for clients that declare the extension."""

    identifier = IDENTIFIER

    def __init__(self) -> None:
        self.tasks: dict[str, _Task] = {}

    def methods(self) -> Sequence[MethodBinding]:
        """``tasks/get``, ``tasks/update``, ``tasks/cancel``."""
        return (MethodBinding("tasks/get", TaskParams, self._get),
                MethodBinding("tasks/update", UpdateParams, self._update),
                MethodBinding("tasks/cancel", TaskParams, self._cancel))

    async def intercept_tool_call(self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any],
                                  call_next: CallNext) -> HandlerResult:
        """Answer ``job`` with a task handle when the client declared the extension."""
        if params.name != "job" or not _declares(ctx):
            return await call_next(ctx)
        args = params.arguments or {}
        task_id = str(uuid.uuid4())
        self.tasks[task_id] = _Task(time.monotonic() + int(args.get("ms", 0)) / 1000,
                                    str(args.get("end", "completed")), str(args.get("note", "")))
        return {"resultType": "task", **self._view(task_id), "pollIntervalMs": 20}

    def _view(self, task_id: str) -> dict[str, Any]:
        task = self.tasks[task_id]
        view: dict[str, Any] = {"taskId": task_id, "status": task.status(), "createdAt": task.created,
                                "lastUpdatedAt": task.created, "ttlMs": 60000}
        if view["status"] == "completed":
            text = f"job done: {task.note}"
            view["result"] = {"content": [{"type": "text", "text": text}], "isError": False,
                              "structuredContent": {"result": text}}
        elif view["status"] == "failed":
            view["error"] = {"code": -32603, "message": f"job failed: {task.note}"}
        elif view["status"] == "input_required":
            view["inputRequests"] = {"go": {"method": "elicitation/create", "params": {
                "mode": "form", "message": "continue?",
                "requestedSchema": {"type": "object", "properties": {"go": {"type": "boolean"}}}}}}
        return view

    def _known(self, task_id: str) -> _Task:
        task = self.tasks.get(task_id)
        if task is None:
            raise MCPError(code=-32602, message="unknown task")
        return task

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        self._known(params.taskId)
        return self._view(params.taskId)

    async def _update(self, ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> HandlerResult:
        self._known(params.taskId).answered = True
        return {}

    async def _cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        task = self._known(params.taskId)
        if task.status() not in TERMINAL:
            task.cancelled = True
        return self._view(params.taskId)


def _declares(ctx: ServerRequestContext[Any, Any]) -> bool:
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    meta = (ctx.params or {}).get("_meta") or {}
    caps = meta.get("io.modelcontextprotocol/clientCapabilities") or {}
    return IDENTIFIER in (caps.get("extensions") or {})


class TaskHandle(Result):
    """A ``CreateTaskResult`` as the client extension claims it."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    taskId: str
    status: str


class _Raw(RequestParams):
    model_config = ConfigDict(extra="allow")


class _AnyResult(Result):
    model_config = ConfigDict(extra="allow")


class TasksClient(ClientExtension):
    """The client half: resolve a task handle by polling until the task ends.

    Args:
        cancel_after: send ``tasks/cancel`` after this many polls (None: never).
    """

    identifier = IDENTIFIER

    def __init__(self, *, cancel_after: int | None = None) -> None:
        self.cancel_after = cancel_after
        self.polls = 0

    def claims(self) -> Sequence[ResultClaim[Any]]:
        """The one claim: ``resultType: "task"`` on ``tools/call``."""
        return (ResultClaim(result_type="task", model=TaskHandle, resolve=self._resolve),)

    async def _send(self, ctx: ClaimContext, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from mcp_types import Request

        request = Request[_Raw, str](method=method, params=_Raw(**params))
        result = await ctx.session.send_request(request, _AnyResult)
        return result.model_dump(by_alias=True, exclude_none=True)

    async def _resolve(self, handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
        task_id = handle.taskId
        while True:
            await anyio.sleep(0.02)
            if self.cancel_after is not None and self.polls >= self.cancel_after:
                view = await self._send(ctx, "tasks/cancel", {"taskId": task_id})
            else:
                self.polls += 1
                view = await self._send(ctx, "tasks/get", {"taskId": task_id})
            status = view.get("status")
            if status == "input_required":
                await self._send(ctx, "tasks/update", {"taskId": task_id,
                                                       "inputResponses": {"go": {"action": "accept",
                                                                                 "content": {"go": True}}}})
            elif status == "completed":
                return CallToolResult.model_validate(view["result"])
            elif status in ("failed", "cancelled"):
                text = "task cancelled" if status == "cancelled" else "task failed"
                return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
