"""The stdio client's limits (SPEC 14), each exercised against a real fixture process."""

from __future__ import annotations

import threading
import time
import tracemalloc

import pytest

from mcpeval_nb.errors import TransportError
from mcpeval_nb.limits import MAX_FRAME_BYTES
from mcpeval_nb.testing.servers.resource_bounds import CANARY
from mcpeval_nb.transport import jsonrpc
from mcpeval_nb.transport.stdio import StdioChannel
from tests.waiting import until

from .transport_helpers import assert_reaped, child_pid, fixture_argv, fixture_session


def _failure(session_call: object) -> TransportError:
    assert callable(session_call)
    with pytest.raises(TransportError) as info:
        session_call()
    assert CANARY not in str(info.value)
    return info.value


def test_oversized_answer_closes_with_frame_error_and_never_buffers_more_than_one_frame() -> None:
    tracemalloc.start()
    try:
        session = fixture_session("resource_bounds", "oversized")
        pid = child_pid(session)
        tracemalloc.reset_peak()
        error = _failure(lambda: session.request("tools/call", {"name": "any"}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (error.reason, str(error)) == ("transport-error", jsonrpc.FRAME_TOO_LARGE)
    assert peak < MAX_FRAME_BYTES + 1024 * 1024
    assert session.closed
    assert_reaped(pid)


def test_frame_of_exactly_four_mib_with_its_newline_is_accepted() -> None:
    with fixture_session("resource_bounds", "frame", str(MAX_FRAME_BYTES)) as session:
        response = session.request("ping")
    assert len(response.result["pad"]) > MAX_FRAME_BYTES - 100


def test_frame_one_byte_over_four_mib_is_refused() -> None:
    with fixture_session("resource_bounds", "frame", str(MAX_FRAME_BYTES + 1)) as session:
        error = _failure(lambda: session.request("ping"))
    assert str(error) == jsonrpc.FRAME_TOO_LARGE


def test_outgoing_frame_over_four_mib_is_refused_before_writing_and_the_session_stays_usable() -> None:
    with fixture_session("resource_bounds", "pid") as session:
        big = {"blob": CANARY + "a" * MAX_FRAME_BYTES}
        error = _failure(lambda: session.request("tools/call", big))
        assert (error.reason, str(error)) == ("transport-error", jsonrpc.OUTGOING_TOO_LARGE)
        assert not session.closed
        assert session.request("ping").result["pid"] == child_pid(session)


def test_write_to_a_server_that_never_reads_times_out_and_reaps_the_child() -> None:
    session = fixture_session("resource_bounds", "no-read", "30", timeout=0.5)
    pid = child_pid(session)
    error = _failure(lambda: session.request("tools/call", {"blob": CANARY + "a" * 2_000_000}))
    assert (error.reason, str(error)) == ("transport-timeout", jsonrpc.WRITE_TIMED_OUT)
    assert session.closed
    assert_reaped(pid)


def test_progress_notifications_do_not_extend_the_response_deadline() -> None:
    # 200 notifications over 2 s: an extended deadline would overflow the 128-notification buffer first.
    with fixture_session("resource_bounds", "interleaved", timeout=1.0) as session:
        session.initialize()
        error = _failure(lambda: session.request("tools/call", {"name": "x"}))
        assert (error.reason, str(error)) == ("transport-timeout", jsonrpc.TIMED_OUT)
        assert 0 < len(session.notifications) < 128


def test_more_than_128_notifications_while_waiting_close_the_transport() -> None:
    session = fixture_session("resource_bounds", "notifications")
    pid = child_pid(session)
    error = _failure(lambda: session.request("tools/call", {"name": "x"}))
    assert (error.reason, str(error)) == ("transport-error", jsonrpc.NOTIFICATION_FLOOD)
    assert_reaped(pid)


def test_exactly_128_notifications_while_waiting_are_buffered() -> None:
    with fixture_session("resource_bounds", "notifications", "128") as session:
        assert session.request("tools/call", {"name": "x"}).result == {"text": CANARY}
        assert len(session.notifications) == 128


def test_notification_129_while_waiting_closes_the_transport() -> None:
    with fixture_session("resource_bounds", "notifications", "129") as session:
        error = _failure(lambda: session.request("tools/call", {"name": "x"}))
    assert str(error) == jsonrpc.NOTIFICATION_FLOOD


def test_notifications_over_four_mib_in_total_close_the_transport() -> None:
    tracemalloc.start()
    try:
        with fixture_session("resource_bounds", "notification-bytes") as session:
            tracemalloc.reset_peak()
            error = _failure(lambda: session.request("tools/call", {"name": "x"}))
            peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(error) == jsonrpc.NOTIFICATION_FLOOD
    assert peak < 4 * MAX_FRAME_BYTES


def test_banners_and_frames_without_jsonrpc_2_0_are_skipped() -> None:
    with fixture_session("resource_bounds", "banner") as session:
        assert session.request("ping").result == {"ok": True}
        assert session.request("ping").result == {"ok": True}


def test_a_response_with_another_id_fails_fast() -> None:
    with fixture_session("resource_bounds", "mismatched-id", timeout=30.0) as session:
        error = _failure(lambda: session.request("ping"))
        assert (error.reason, str(error)) == ("transport-error", jsonrpc.MISMATCHED_ID)
        assert session.closed


def test_a_late_reply_to_an_abandoned_request_is_discarded_once() -> None:
    with fixture_session("resource_bounds", "late", "0.6", timeout=0.1) as session:
        error = _failure(lambda: session.request("ping"))
        assert error.reason == "transport-timeout"
        assert not session.closed
        assert session.request("ping", timeout=10.0).result == {"late": False}


def test_a_second_late_reply_to_the_same_abandoned_request_fails_as_mismatched() -> None:
    with fixture_session("resource_bounds", "late-twice", "0.6", timeout=0.1) as session:
        _failure(lambda: session.request("ping"))
        error = _failure(lambda: session.request("ping", timeout=10.0))
        assert str(error) == jsonrpc.MISMATCHED_ID


def test_server_requests_are_declined_with_method_unavailable_by_default() -> None:
    with fixture_session("resource_bounds", "sub-requests", "3") as session:
        outcome = session.call_tool("any", {})
    assert outcome.kind == "success"
    assert outcome.server_requests == 3
    assert outcome.result == {"codes": [-32601, -32601, -32601]}


def test_server_requests_are_answered_by_the_callback() -> None:
    from mcpeval_nb.transport import Response

    seen: list[str] = []

    def answer(method: str, params: object) -> Response:
        seen.append(method)
        return Response(result={"role": "assistant", "content": {"type": "text", "text": "stub"}})

    with fixture_session("resource_bounds", "sub-requests", "2") as session:
        outcome = session.call_tool("any", {}, on_server_request=answer, max_server_requests=2)
    assert seen == ["sampling/createMessage", "sampling/createMessage"]
    assert outcome.result == {"codes": ["result", "result"]}


def test_more_server_requests_than_the_bound_fail_the_call() -> None:
    with fixture_session("resource_bounds", "sub-requests", "9") as session:
        error = _failure(lambda: session.call_tool("any", {}))
    assert (error.reason, str(error)) == ("transport-error", jsonrpc.SUB_REQUEST_FLOOD)


def test_a_full_incoming_queue_holds_sixteen_frames_then_closes_the_transport() -> None:
    channel = StdioChannel(fixture_argv("resource_bounds", "flood"), queue_wait=0.0)
    try:
        assert channel.wait_reader(10.0)
        received = 0
        with pytest.raises(TransportError) as info:
            while channel.receive(deadline=time.monotonic() + 10.0) is not None:
                received += 1
        assert received == 16
        assert (info.value.reason, str(info.value)) == ("transport-error", jsonrpc.QUEUE_FULL)
    finally:
        channel.close()
    assert_reaped(channel.pid)


def test_a_flood_of_large_frames_never_holds_more_than_sixteen_of_them() -> None:
    tracemalloc.start()
    try:
        channel = StdioChannel(fixture_argv("resource_bounds", "flood", str(1024 * 1024)), queue_wait=0.0)
        try:
            assert channel.wait_reader(30.0)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            channel.close()
    finally:
        tracemalloc.stop()
    # 40 MiB were written; the client held its 4 MiB read buffer and at most 16 decoded 1 MiB frames.
    assert peak < MAX_FRAME_BYTES + 16 * 1024 * 1024 + 8 * 1024 * 1024


def test_close_from_another_thread_cancels_a_blocked_write() -> None:
    session = fixture_session("resource_bounds", "no-read", "30", timeout=30.0)
    errors: list[TransportError] = []

    def blocked_write() -> None:
        try:
            session.request("tools/call", {"blob": "a" * 2_000_000})
        except TransportError as exc:
            errors.append(exc)

    worker = threading.Thread(target=blocked_write)
    worker.start()
    worker.join(0.3)
    session.close()
    assert until(lambda: not worker.is_alive(), stall_s=10.0)  # tests/waiting.py
    assert [e.reason for e in errors] == ["transport-closed"]


def test_close_from_another_thread_cancels_a_pending_response_wait() -> None:
    session = fixture_session("resource_bounds", "interleaved", timeout=30.0)
    errors: list[TransportError] = []

    def waiting() -> None:
        try:
            session.request("tools/call", {"name": "x"})
        except TransportError as exc:
            errors.append(exc)

    worker = threading.Thread(target=waiting)
    worker.start()
    worker.join(0.2)
    session.close()
    assert until(lambda: not worker.is_alive(), stall_s=10.0)  # tests/waiting.py
    assert [e.reason for e in errors] in (["transport-closed"], ["transport-error"])
