"""The Streamable HTTP client against a real loopback fixture server (stdlib http.server process)."""

from __future__ import annotations

import threading
import tracemalloc

import pytest

from mcpeval_nb.errors import TransportError, UsageError
from mcpeval_nb.limits import MAX_HTTP_BODY_BYTES
from mcpeval_nb.testing.servers.streamable_http import CANARY
from mcpeval_nb.transport import AUTHORIZATION_ENV, HttpTarget, McpSession, Response, http

from .transport_helpers import free_port, http_fixture

SECRET = "Bearer CANARY-token-0b1d"


def _connect(url: str, *, timeout: float = 5.0) -> McpSession:
    return McpSession.connect(HttpTarget(url), timeout=timeout)


def _failure(call: object) -> TransportError:
    assert callable(call)
    with pytest.raises(TransportError) as info:
        call()
    assert CANARY not in str(info.value) and "CANARY" not in str(info.value)
    return info.value


@pytest.mark.parametrize("mode", ["json", "sse"])
def test_handshake_catalog_and_calls_work_with_json_and_sse_answers(mode: str) -> None:
    with http_fixture(mode) as url, _connect(url) as session:
        session.initialize()
        assert session.protocol_version == "2025-06-18"
        assert session.list_tools().names == ["ok", "slow", "headers", "ask", "announce", "cancellable",
                                              "cancels"]
        outcome = session.call_tool("ok", {"secret": CANARY})
        assert outcome.ok and outcome.result["content"][0]["text"].startswith(CANARY)
        assert session.ping().result == {}


def test_session_id_and_negotiated_protocol_version_are_sent_on_later_requests() -> None:
    with http_fixture("json") as url, _connect(url) as session:
        session.initialize()
        seen = session.call_tool("headers", {}).result
    assert seen == {"authorization": False, "protocol_version": "2025-06-18", "session": True}


def test_sse_notifications_are_buffered_and_other_event_types_skipped() -> None:
    with http_fixture("sse") as url, _connect(url) as session:
        session.initialize()
        assert session.call_tool("ok", {}).ok
        assert [note["method"] for note in session.notifications] == ["notifications/progress"]


def test_server_requests_on_an_sse_stream_are_declined_by_default_and_answered_by_a_callback() -> None:
    with http_fixture("sse") as url, _connect(url) as session:
        session.initialize()
        declined = session.call_tool("ask", {})
        answered = session.call_tool("ask", {}, on_server_request=lambda m, p: Response(result={"action": m}))
    assert declined.result["reply"] == -32601 and declined.server_requests == 1
    assert answered.result["reply"] == {"action": "elicitation/create"}


def test_authorization_from_the_environment_is_sent_and_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(AUTHORIZATION_ENV, SECRET)
    with http_fixture("auth", {"FIXTURE_EXPECTED_AUTHORIZATION": SECRET}) as url, _connect(url) as session:
        session.initialize()
        assert session.call_tool("headers", {}).result["authorization"] is True
        assert SECRET not in repr(session._channel) + repr(vars(session))


def test_a_refused_authorization_is_named_and_the_value_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(AUTHORIZATION_ENV, SECRET)
    with http_fixture("auth", {"FIXTURE_EXPECTED_AUTHORIZATION": "other"}) as url, _connect(url) as session:
        error = _failure(session.initialize)
    assert (error.reason, str(error)) == (
        "transport-unauthorized", "HTTP endpoint answered 401 (authorization required): check "
        "MCPEVAL_HTTP_AUTHORIZATION")


@pytest.mark.parametrize(("mode", "message"), [
    ("auth", "HTTP endpoint answered 401 (authorization required): set MCPEVAL_HTTP_AUTHORIZATION"),
    ("forbidden", "HTTP endpoint answered 403 (forbidden): set MCPEVAL_HTTP_AUTHORIZATION"),
])
def test_401_and_403_have_their_own_reason_and_say_which_variable_to_set(
        monkeypatch: pytest.MonkeyPatch, mode: str, message: str) -> None:
    monkeypatch.delenv(AUTHORIZATION_ENV, raising=False)
    with http_fixture(mode, {"FIXTURE_EXPECTED_AUTHORIZATION": "x"}) as url, _connect(url) as session:
        error = _failure(session.initialize)
    assert (error.reason, str(error)) == ("transport-unauthorized", message)


@pytest.mark.parametrize("value", ["Bearer a\r\nX-Injected: 1", " padded", "t\u00e9l\u00e9", "x" * 9000])
def test_an_unsafe_authorization_value_is_a_usage_error_that_does_not_quote_it(
        monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(AUTHORIZATION_ENV, value)
    with pytest.raises(UsageError) as info:
        McpSession.connect(HttpTarget("http://127.0.0.1:9/mcp"))
    assert value.strip() not in str(info.value) and AUTHORIZATION_ENV in str(info.value)


def test_a_body_announced_over_8_mib_is_refused_before_reading() -> None:
    with http_fixture("oversized") as url, _connect(url) as session:
        session.initialize()
        tracemalloc.start()
        try:
            error = _failure(lambda: session.call_tool("ok", {}))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert (error.reason, str(error)) == ("transport-error", http.BODY_TOO_LARGE)
    assert peak < 1024 * 1024


def test_an_endless_sse_stream_stops_at_8_mib_with_bounded_memory() -> None:
    with http_fixture("oversized-sse") as url, _connect(url) as session:
        session.initialize()
        tracemalloc.start()
        try:
            error = _failure(lambda: session.call_tool("ok", {}))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert (error.reason, str(error)) == ("transport-error", http.BODY_TOO_LARGE)
    assert peak < 3 * MAX_HTTP_BODY_BYTES


def test_redirects_are_refused_not_followed() -> None:
    with http_fixture("redirect") as url, _connect(url) as session:
        error = _failure(session.initialize)
    assert (error.reason, str(error)) == ("transport-error", http.REDIRECT)


def test_a_slow_endpoint_times_out_at_the_fixed_deadline_and_close_aborts_the_exchange() -> None:
    with http_fixture("slow") as url:
        session = _connect(url, timeout=0.3)
        session.initialize(send_initialized=False)
        error = _failure(session.ping)
        assert error.reason == "transport-timeout"
        session.close()
        assert session.closed


def test_an_error_status_is_a_transport_error_and_an_expired_session_is_closed() -> None:
    with http_fixture("status") as url, _connect(url) as session:
        session.initialize(send_initialized=False)
        assert str(_failure(session.ping)) == "HTTP endpoint answered status 500"
    with http_fixture("expire") as url, _connect(url) as session:
        session.initialize(send_initialized=False)
        error = _failure(session.ping)
    assert (error.reason, str(error)) == ("transport-closed", http.SESSION_EXPIRED)


def test_an_unreachable_endpoint_is_a_transport_error() -> None:
    with _connect(f"http://127.0.0.1:{free_port()}/mcp") as session:
        error = _failure(session.initialize)
    assert (error.reason, str(error)) == ("transport-error", http.UNREACHABLE)


@pytest.mark.parametrize("url", [
    "http://example.com/mcp",
    "http://user:pw@127.0.0.1:8080/mcp",
    "http://127.0.0.1:8080/mcp?token=CANARY",
    "http://127.0.0.1:8080/mcp#CANARY",
    "ftp://127.0.0.1/mcp",
])
def test_endpoint_policy_refuses_remote_credentialed_or_query_urls(url: str) -> None:
    with pytest.raises(UsageError) as info:
        McpSession.connect(HttpTarget(url))
    assert "CANARY" not in str(info.value) and "pw" not in str(info.value)


def test_remote_endpoints_need_https_even_with_allow_remote_http() -> None:
    with pytest.raises(UsageError, match="HTTPS"):
        McpSession.connect(HttpTarget("http://example.com/mcp", allow_remote_http=True))


@pytest.mark.parametrize("mode", ["json", "sse"])
def test_server_initiated_notifications_arrive_on_the_get_stream_opened_by_a_subscription(mode: str) -> None:
    with http_fixture(mode) as url, _connect(url) as session:
        session.initialize()
        assert session.request("resources/subscribe", {"uri": "fixture://resource"}).ok
        assert session.call_tool("announce", {}).result == {"announced": 1}
        note = session.wait_notification(lambda n: n["method"] == "notifications/resources/updated",
                                         timeout=10.0)
    assert note is not None and note["params"]["uri"] == "fixture://resource"


def test_a_refused_get_stream_leaves_the_session_working() -> None:
    with http_fixture("status") as url, _connect(url) as session:
        session.initialize(send_initialized=False)
        assert session.wait_notification(lambda n: True, timeout=0.2) is None
        assert not session.closed


def test_an_sse_stream_that_ends_before_its_answer_reports_transport_closed() -> None:
    with http_fixture("sse-cut") as url, _connect(url, timeout=30.0) as session:
        session.initialize()
        error = _failure(lambda: session.call_tool("ok", {}))
    assert (error.reason, str(error)) == ("transport-closed", http.STREAM_ENDED)


def test_a_cancellation_never_overtakes_the_request_it_names() -> None:
    """Each request is posted by a worker thread; a cancellation sent at once on the caller's connection
    used to reach the server first now and then, and the server ignored it and answered: the probe then
    charged it with ``cancellation-ignored`` (seen against server-everything under load)."""
    rounds = 12
    with http_fixture("sse") as url:
        with _connect(url, timeout=30.0) as session:
            session.initialize()
            for _ in range(rounds):
                pending = session.start_call("cancellable", {"ms": 30_000})
                assert session.cancel(pending, reason="stop", grace_seconds=0.2) is None
            assert session.call_tool("cancels", {}).result == {"in_flight": rounds, "unknown": 0}
        # close() ended the held streams: their sockets are shut even though http.client had let go of
        # them (the fixture answers ``Connection: close``), so no worker is left reading one
        assert not [t for t in threading.enumerate() if t.name == "mcpeval-http" and t.is_alive()]
