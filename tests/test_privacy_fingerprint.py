"""Error-message skeletons and salted template ids (SPEC 4.3)."""

from __future__ import annotations

import hashlib

import pytest

from mcpeval_nb.privacy import skeleton, template_id, valid_template_id

ZERO_SALT = bytes(32)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # 1. uuids (after lowercasing)
        ("session 0be9b59c-1234-4abc-8def-0123456789ab gone", "session u gone"),
        ("Session 0BE9B59C-1234-4ABC-8DEF-0123456789AB Gone", "session u gone"),
        # 2. quoted runs: double quotes anywhere, single quotes only after a boundary
        ('no such key "CANARY key" here', "no such key q here"),
        ("can't open 'CANARY file' now", "can't open q now"),
        ("don't won't can't", "don't won't can't"),
        ("'CANARY' at start", "q at start"),
        ("call('x') [\"y\"] {'z'}", "call(q) [q] {q}"),
        ('""', "q"),
        ("it's 'a' and 'b'", "it's q and q"),
        # 3. URLs (any scheme)
        ("fetch https://CANARY.example.com/a?b=1 failed", "fetch l failed"),
        ("see FTP://host/x", "see l"),
        ("git+ssh://CANARY@host/repo.git: denied", "l denied"),
        # 4. paths only after a boundary: tools/call is not a path
        ("unknown method tools/call", "unknown method tools/call"),
        ("file /etc/CANARY missing", "file p missing"),
        ("/var/CANARY: not found", "p not found"),
        ("opening (/tmp/CANARY)", "opening (p"),
        ("can't open '/tmp/x", "can't open 'p"),
        ("a/b/c and x/y", "a/b/c and x/y"),
        # 5. digit runs
        ("error 404 at line 12", "error 0 at line 0"),
        ("v1.2.3", "v0.0.0"),
        ("arabic ٣٤", "arabic 0"),
        # 6-7. whitespace collapsed and trimmed
        ("  A  B\t\n C  ", "a b c"),
        ("a\u00a0\u2003b", "a b"),
        ("", ""),
    ],
)
def test_skeleton_replaces_content_in_spec_order(message: str, expected: str) -> None:
    assert skeleton(message) == expected


def test_uuids_are_replaced_before_digit_runs() -> None:
    assert skeleton("id 12345678-1234-1234-1234-123456789012") == "id u"


def test_quotes_are_replaced_before_urls_and_paths() -> None:
    assert skeleton('bad "https://x.y/z" and "/etc/p"') == "bad q and q"


def test_unit_separator_controls_are_not_whitespace_as_in_rust() -> None:
    # Rust's \s is Unicode White_Space, which excludes U+001C..U+001F; Python's str \s includes them.
    assert skeleton("a\x1fb") == "a\x1fb"
    assert skeleton("\x1ca\x1d") == "\x1ca\x1d"
    assert skeleton("x \x1e/etc/y") == "x \x1e/etc/y"
    assert skeleton("x\x1f'q'") == "x\x1f'q'"


def test_template_id_matches_the_spec_example_for_the_zero_salt() -> None:
    assert template_id(ZERO_SALT, "session 0be9b59c-1234-4abc-8def-0123456789ab gone") == "eb5b81a70555da3b"


def test_template_id_is_sha256_of_salt_nul_skeleton() -> None:
    salt = bytes(range(32))
    message = "Timeout after 30 s for 'CANARY'"
    digest = hashlib.sha256(salt + b"\x00" + skeleton(message).encode()).hexdigest()
    assert template_id(salt, message) == digest[:16]
    assert valid_template_id(template_id(salt, message))


def test_messages_differing_only_in_content_share_a_template_id() -> None:
    a = template_id(ZERO_SALT, "user 'alice' not found in /srv/a (42 tries)")
    b = template_id(ZERO_SALT, "User 'CANARY-bob' not found in /srv/CANARY (7 tries)")
    assert a == b
    assert a != template_id(ZERO_SALT, "user 'alice' was found")


def test_template_ids_differ_between_salts() -> None:
    assert template_id(ZERO_SALT, "boom") != template_id(b"\x01" * 32, "boom")


def test_template_id_never_contains_message_text() -> None:
    tid = template_id(ZERO_SALT, "CANARY")
    assert "canary" not in tid.lower()
    assert len(tid) == 16
