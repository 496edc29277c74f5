"""The capture root's one owner: ``Root.of`` resolves once, ``root.layout`` names every file, and every
public function that takes a root accepts the same shape."""

from __future__ import annotations

import ast
import inspect
import os
from pathlib import Path

import pytest

import mcpeval_nb
from mcpeval_nb import Root, UsageError, load_salt, resolve_root
from mcpeval_nb.root import layout

PACKAGE = Path(mcpeval_nb.__file__).resolve().parent


def test_root_of_says_where_the_root_came_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPEVAL_HOME", str(tmp_path / "env"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert (Root.of(tmp_path / "arg").path, Root.of(tmp_path / "arg").source) == (tmp_path / "arg", "flag")
    assert (Root.of().path, Root.of().source) == (tmp_path / "env", "MCPEVAL_HOME")
    monkeypatch.delenv("MCPEVAL_HOME")
    assert (Root.of(None).path, Root.of(None).source) == (tmp_path / "home" / ".mcp-eval", "default")
    assert resolve_root(str(tmp_path / "arg")) == tmp_path / "arg"
    assert not (tmp_path / "arg").exists()  # nothing is created


def test_a_resolved_root_passes_through_unchanged_and_goes_where_a_path_does(tmp_path: Path) -> None:
    root = Root.of(tmp_path)
    assert Root.of(root) is root
    assert os.fspath(root) == str(tmp_path) and Path(root) == tmp_path
    assert resolve_root(root) == tmp_path
    mcpeval_nb.append_record(root, mcpeval_nb.CallRecord(ts="2026-08-01T00:00:00.000Z", session="s", seq=1,
                                                          server="srv", method="tools/list", outcome="ok"))
    assert mcpeval_nb.open_store(root).calls.num_rows == 1


def test_the_salt_is_loaded_once_per_root(tmp_path: Path) -> None:
    root = Root.of(tmp_path)
    salt = root.salt()
    assert len(salt) == 32 and load_salt(tmp_path) == salt
    layout.salt_path(tmp_path).unlink()
    assert root.salt() == salt  # remembered: one read per resolved root
    assert load_salt(tmp_path) != salt  # a fresh resolution reads (here: creates) it again


def test_config_json_is_typed_and_each_setting_checked_only_when_asked(tmp_path: Path) -> None:
    root = Root.of(tmp_path)
    assert root.config.retention_days is None and root.config.promotion_threshold is None
    layout.config_path(tmp_path).write_text('{"retention_days": 7, "promotion_threshold": "high", "x": 1}')
    assert root.config.retention_days == 7  # a bad threshold never stops a retention pass
    with pytest.raises(UsageError, match=r"config.json: promotion_threshold must be a number"):
        _ = root.config.promotion_threshold
    layout.config_path(tmp_path).write_text("[]")
    with pytest.raises(UsageError, match="is not a JSON object"):
        _ = root.config


def test_the_layout_names_every_journal_kind_by_its_store_path() -> None:
    assert layout.journal_kind("calls-2026-08-01.jsonl") is layout.CALLS
    assert layout.journal_kind("annotations-unknown.jsonl") is layout.ANNOTATIONS
    assert layout.journal_kind("probes/history.jsonl") is layout.TRENDS
    assert layout.journal_kind("probes/sizes.jsonl") is layout.SIZES
    assert layout.journal_kind("sub/calls-2026-08-01.jsonl") is None  # daily journals live at the top
    assert layout.journal_kind("history.jsonl") is None
    assert layout.CALLS.day("calls-2026-08-01.jsonl") == "2026-08-01" and layout.TRENDS.day("x") is None
    assert layout.kind_of_name("history.jsonl") is layout.TRENDS  # read_records on any path, by name
    for name in layout.FILES:
        assert name.split("<")[0] in (PACKAGE / "root" / "layout.py").read_text()


def _public_functions_taking_a_root() -> list[tuple[str, inspect.Parameter]]:
    """Every public function, and option bundle, with a ``root`` parameter (results that hold a resolved
    root as a ``Path`` are not among them)."""
    found = []
    for name in mcpeval_nb.__all__:
        obj = getattr(mcpeval_nb, name)
        targets = [obj] if inspect.isfunction(obj) else []
        if inspect.isclass(obj):
            targets = [getattr(obj, "__init__", None)]
        for target in targets:
            try:
                params = inspect.signature(target).parameters
            except (TypeError, ValueError):
                continue
            held = inspect.isclass(obj) and params.get("root", None) is not None and \
                params["root"].annotation in (Path, "Path")
            if "root" in params and not held:
                found.append((name, _expanded(target, params["root"])))
    return found


def _expanded(target: object, param: inspect.Parameter) -> inspect.Parameter:
    """``param`` with a module-level type alias of its annotation spelled out (``Source`` is
    ``"RootLike | Store"``: a function that also takes an open store still takes the one shape)."""
    alias = getattr(inspect.getmodule(target), str(param.annotation), None)
    if isinstance(alias, str) or getattr(alias, "__origin__", None) is not None:
        return param.replace(annotation=str(alias))
    return param


def test_every_public_function_that_takes_a_root_accepts_the_one_shape() -> None:
    found = _public_functions_taking_a_root()
    assert len(found) >= 30
    wrong = [name for name, param in found if "RootLike" not in str(param.annotation)]
    assert wrong == []
#: Names under a root, as code would spell them to build a path (``root.layout`` is their one owner).
_SPELLED = {*layout.FILES, layout.STORE, layout.PROBES, layout.TRENDS.pattern, layout.SIZES.pattern,
            "history.jsonl", "sizes.jsonl", "calls-", "annotations-", "calls-*.jsonl", "annotations-*.jsonl",
            ".index.db.tmp-", "index.db.lock", "lifecycle.db.lock"}


def _spelled_names(path: Path, base: Path = PACKAGE.parent) -> list[str]:
    """Constants of ``path`` that spell a name under a root: exactly a layout name, or ``store``/``probes``
    joined onto a path with ``/``."""
    tree = ast.parse(path.read_text())
    divisions = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)]
    joined = {id(side) for node in divisions for side in (node.left, node.right)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        if node.value in _SPELLED - {layout.STORE, layout.PROBES} or (
                node.value in (layout.STORE, layout.PROBES) and id(node) in joined):
            found.append((node.lineno, f"{path.relative_to(base)}:{node.lineno} {node.value!r}"))
    return [hit for _, hit in sorted(found)]


def test_no_module_but_the_layout_spells_a_file_name_under_the_root() -> None:
    own = PACKAGE / "root" / "layout.py"
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) if path != own for hit in _spelled_names(path)]
    assert found == []


def test_the_spelling_check_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('from pathlib import Path\nP = Path("r") / "store"\nQ = "index.db"\nR = {"probes": []}\n')
    assert _spelled_names(bad, tmp_path) == ["bad.py:2 'store'", "bad.py:3 'index.db'"]
