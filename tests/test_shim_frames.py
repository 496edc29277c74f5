"""Bounded frame reading on real pipes, and the SSE parser used by shim-http."""

from __future__ import annotations

import os
import threading

import pytest

from mcpeval_nb.capture.frames import FrameReader, FrameTooLarge, WakePipe, write_all
from mcpeval_nb.capture.http_proxy import SSEParser


def _pipe_with(data: bytes) -> tuple[int, threading.Thread]:
    r, w = os.pipe()

    def feed() -> None:
        try:
            write_all(w, data)
        except OSError:
            pass
        finally:
            os.close(w)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return r, thread


def test_frames_are_returned_one_at_a_time_with_their_newlines() -> None:
    r, thread = _pipe_with(b'{"a":1}\n\nlast-without-newline')
    reader = FrameReader(r, limit=64)
    assert reader.read() == b'{"a":1}\n'
    assert reader.read() == b"\n"
    assert reader.read() == b"last-without-newline"
    assert reader.read() is None
    thread.join(5)
    os.close(r)


def test_a_frame_at_the_bound_passes_and_one_byte_more_is_refused_without_reading_past_it() -> None:
    limit = 1000
    r, thread = _pipe_with(b"a" * (limit - 1) + b"\n" + b"b" * limit + b"TAIL-NEVER-READ")
    reader = FrameReader(r, limit=limit)
    assert reader.read() == b"a" * (limit - 1) + b"\n"
    with pytest.raises(FrameTooLarge):
        reader.read()
    rest = b""
    while chunk := os.read(r, 65536):
        rest += chunk
    assert rest == b"TAIL-NEVER-READ"  # the reader stopped exactly at the bound
    thread.join(5)
    os.close(r)


def test_a_wake_up_releases_a_reader_blocked_on_an_idle_peer() -> None:
    r, w = os.pipe()
    wake = WakePipe()
    reader = FrameReader(r, wake=wake)
    result: list[bytes | None] = [b"unset"]
    thread = threading.Thread(target=lambda: result.__setitem__(0, reader.read()), daemon=True)
    thread.start()
    wake.wake()
    thread.join(10)
    assert not thread.is_alive() and result == [None]
    for fd in (r, w):
        os.close(fd)
    wake.close()


def test_sse_events_are_split_across_chunks_and_line_endings() -> None:
    parser = SSEParser()
    stream = b'event: message\r\ndata: {"a":\r\ndata: 1}\r\n\r\n: comment\n\nid: 7\ndata:\n\ndata:x\r\rdata'
    events: list[bytes] = []
    for i in range(len(stream)):  # one byte at a time: CR/LF pairs split across chunks
        events += parser.feed(stream[i:i + 1])
    events += parser.feed(b"\n\n")
    assert events == [b'{"a":\n1}', b"x"]
