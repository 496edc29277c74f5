"""The public surface: one sorted ``__all__``, docstrings, one version (imports: tests/test_imports.py)."""

from __future__ import annotations
import __future__

import ast
import importlib
import inspect
import pkgutil
import types
from pathlib import Path

import pytest

import mcpeval_nb

PACKAGE = Path(mcpeval_nb.__file__).resolve().parent

def test_all_is_sorted_and_every_name_resolves() -> None:
    names = mcpeval_nb.__all__
    assert names == sorted(names)
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(mcpeval_nb, name), name


def test_all_is_complete() -> None:
    public = {
        name
        for name, value in vars(mcpeval_nb).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType | __future__._Feature)
    }
    assert public - set(mcpeval_nb.__all__) == set()


def _type_checking_imports() -> dict[str, str]:
    """name -> module of every import inside ``if typing.TYPE_CHECKING:`` in the package ``__init__``."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.level == 1, ast.unparse(stmt)
                for alias in stmt.names:
                    assert alias.asname == alias.name, f"{alias.name} must be re-exported as itself"
                    found[alias.name] = f".{stmt.module}"
    return found


def test_all_is_derived_from_the_one_export_table() -> None:
    table = mcpeval_nb._EXPORTS
    names = [name for group in table.values() for name in group]
    assert len(names) == len(set(names)), "a name is exported from two modules"
    assert mcpeval_nb.__all__ == sorted([*names, "__version__"])
    # The typed mirror for mypy and editors names exactly the same modules and names.
    assert _type_checking_imports() == {name: module for module, group in table.items() for name in group}
    for module, group in table.items():
        loaded = importlib.import_module(module, "mcpeval_nb")
        for name in group:
            assert getattr(mcpeval_nb, name) is getattr(loaded, name), name


def test_the_version_comes_from_the_distribution_metadata() -> None:
    from importlib import metadata

    assert mcpeval_nb.__version__ == metadata.version("mcpeval-nb")


def test_the_version_is_read_once() -> None:
    # Every version the package reports is _version.__version__: no other module asks the metadata.
    readers = [f"{path.relative_to(PACKAGE)}:{node.lineno}" for path in sorted(PACKAGE.rglob("*.py"))
               if path.name != "_version.py" for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.ImportFrom) and node.module in ("importlib", "importlib.metadata")
               and any(alias.name in ("metadata", "version") for alias in node.names)]
    assert readers == []
    from mcpeval_nb.probe.readiness.model import measurement_profile

    assert measurement_profile(attested_read_only=False).evaluator_version == mcpeval_nb.__version__


#: Types that carry raw protocol content: importable from their own package, never from `mcpeval_nb`.
RAW_CONTENT = {
    "mcpeval_nb.transport": ("McpSession", "Response", "RpcError", "ToolOutcome", "Catalog"),
    "mcpeval_nb.capture": ("Correlator", "classify_frame"),
}


@pytest.mark.parametrize("module", sorted(RAW_CONTENT))
def test_raw_content_types_stay_out_of_the_payload_free_surface(module: str) -> None:
    package = importlib.import_module(module)
    for name in RAW_CONTENT[module]:
        assert name not in mcpeval_nb.__all__, name
        assert name in package.__all__ and getattr(package, name) is not None
        with pytest.raises(AttributeError):
            getattr(mcpeval_nb, name)
    assert "raw protocol content" in (package.__doc__ or "").replace("\n", " ")


def _documented(obj: object) -> bool:
    return bool(inspect.getdoc(obj))


def test_every_public_object_has_a_docstring() -> None:
    missing = []
    for name in mcpeval_nb.__all__:
        obj = getattr(mcpeval_nb, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj)):
            continue
        if not _documented(obj):
            missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                target = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if inspect.isfunction(target) and not target.__doc__:
                    missing.append(f"{name}.{attr}")
    assert missing == []


def test_every_module_all_resolves_and_is_documented() -> None:
    missing = []
    for info in pkgutil.walk_packages(mcpeval_nb.__path__, "mcpeval_nb."):
        if info.name.endswith("__main__") or info.name.startswith("mcpeval_nb.testing.servers."):
            continue  # entry points that run when imported as scripts
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if obj is None and not hasattr(module, name):
                missing.append(f"{info.name}.{name} (unresolved)")
            elif (inspect.isclass(obj) or inspect.isfunction(obj)) and not _documented(obj):
                missing.append(f"{info.name}.{name}")
    assert missing == []
