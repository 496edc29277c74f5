"""``_frozen.Frozen``: the immutable values the stdio shim makes before its server starts behave like the
frozen dataclasses they replace (fields in order, equality, hashing, ``repr``), and hide what they must."""

from __future__ import annotations

import pytest

from mcpeval_nb import ShimOptions
from mcpeval_nb.root.layout import CALLS, JournalKind


def test_shim_options_are_immutable_compare_by_value_and_never_show_the_environment() -> None:
    secret = "CANARY-env-value"
    options = ShimOptions(server="b", command=("srv",), root="/r", env={"TOKEN": secret})
    assert (options.server, options.command, options.root, options.session, options.stdin_fd,
            options.stdout_fd, options.grace_s, options.strict_frames, options.catalog) == \
        ("b", ("srv",), "/r", None, 0, 1, 2.0, False, True)
    assert options == ShimOptions("b", ("srv",), "/r", env={"TOKEN": secret})
    assert options != ShimOptions(server="b", command=("srv",), root="/r")
    assert options != ("b", ("srv",))
    with pytest.raises(AttributeError, match="ShimOptions is immutable: cannot set 'server'"):
        options.server = "c"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot delete 'root'"):
        del options.root  # type: ignore[misc]
    shown = repr(options)
    assert shown.startswith("ShimOptions(server='b', command=('srv',), root='/r'") and secret not in shown
    assert "env" not in shown


def test_journal_kinds_hash_and_compare_by_value() -> None:
    again = JournalKind("calls", "calls-{day}.jsonl")
    assert again == CALLS and hash(again) == hash(CALLS) and {CALLS: 1}[again] == 1
    assert repr(CALLS) == "JournalKind(name='calls', pattern='calls-{day}.jsonl')"
    with pytest.raises(AttributeError):
        CALLS.name = "x"  # type: ignore[misc]
