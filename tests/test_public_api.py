"""The public surface: one sorted ``__all__``, docstrings, and imports that point one way (DESIGN)."""

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

# Layers of DESIGN.md, lowest first: a module may import only from its own layer or lower ones.
RANKS: dict[str, float] = {
    "_version": 0,
    "errors": 0,
    "limits": 0,
    "jsonfmt": 0,
    "junit": 0,
    "schemacheck": 0,
    "progress": 0,
    "htmltext": 0,
    "privacy": 1,
    "root": 1.5,
    "journal": 2,
    "tables": 3,
    "analysis": 3,
    "transport": 3.5,
    "probe": 4,
    "capture": 4,
    "review": 4,
    "findings": 4,
    "gates": 4,
    "catalog": 4,
    "triage": 4,
    "governance": 4,
    "sizes": 4,
    "phases": 4,
    "serve": 4,  # a service over triage and probe; the CLI reaches it through the public package
    "": 5,
    "testing": 5,  # "" is the public mcpeval_nb/__init__.py
    "cli": 6,
    "charts": 6,
    "widgets": 6,
    "demo": 6,
    "__main__": 6,
}
# These import only what `mcpeval_nb` exports (and each other within their own package); the panels
# also draw with `charts`, so that a panel and a notebook cell show the same picture.
FRONT_ENDS = ("cli", "charts", "widgets")
ALSO_ALLOWED = {"widgets": ("charts",)}


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


def _module_name(path: Path, pkg: Path = PACKAGE) -> str:
    parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str, pkg: Path = PACKAGE) -> bool:
    """True when ``name`` (``mcpeval_nb.a.b``) is a module or package of ours."""
    rel = pkg.parent.joinpath(*name.split("."))
    return rel.with_suffix(".py").is_file() or (rel / "__init__.py").is_file()


def _imports(path: Path, pkg: Path = PACKAGE) -> list[tuple[int, str]]:
    """Every module an import statement in ``path`` names (absolute), with its line number.

    ``from X import a`` names ``X.a`` when that is a module, else ``X``.
    """
    module = _module_name(path, pkg)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((node.lineno, sub if _is_module(sub, pkg) else base))
    return found


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "mcpeval_nb":
        return None
    return parts[1] if len(parts) > 1 else ""


def _violations(paths: list[Path], pkg: Path = PACKAGE) -> list[str]:
    found = []
    for path in paths:
        own = _layer(_module_name(path, pkg))
        if own is None or own not in RANKS:
            continue
        for line, target in _imports(path, pkg):
            layer = _layer(target)
            if layer in RANKS and RANKS[layer] > RANKS[own]:
                found.append(f"{path.relative_to(pkg.parent)}:{line} imports {target}")
    return found


def test_lower_layers_never_import_higher_ones() -> None:
    assert _violations(sorted(PACKAGE.rglob("*.py"))) == []


def _front_end_violations(front: str, paths: list[Path], pkg: Path = PACKAGE) -> list[str]:
    found = []
    for path in paths:
        for line, target in _imports(path, pkg):
            if _layer(target) in (None, "", front, *ALSO_ALLOWED.get(front, ())):
                continue  # third-party, stdlib, `mcpeval_nb` itself, the front end's own package
            found.append(f"{path.relative_to(pkg.parent)}:{line} imports {target}")
    return found


@pytest.mark.parametrize("front", FRONT_ENDS)
def test_front_ends_import_only_the_public_package(front: str) -> None:
    paths = [PACKAGE / f"{front}.py"] if (PACKAGE / f"{front}.py").exists() else []
    paths += sorted((PACKAGE / front).rglob("*.py")) if (PACKAGE / front).is_dir() else []
    assert _front_end_violations(front, paths) == []


def test_the_import_checks_catch_violations(tmp_path: Path) -> None:
    # The checkers must be able to fail: a scratch copy of the layout with planted offenders.
    pkg = tmp_path / "mcpeval_nb"
    for sub in ("privacy", "journal", "tables", "cli"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "privacy" / "shape.py").write_text("")
    bad = pkg / "privacy" / "bad.py"
    bad.write_text(
        "from ..journal import append_record\nimport mcpeval_nb.tables\nfrom . import shape\n"
        "from mcpeval_nb import __version__\n"
    )
    front = pkg / "cli" / "bad.py"
    front.write_text(
        "from ..privacy import shape\nfrom mcpeval_nb import CallRecord\nimport click\nfrom . import bad\n"
    )
    assert _violations([bad], pkg) == [
        "mcpeval_nb/privacy/bad.py:1 imports mcpeval_nb.journal",
        "mcpeval_nb/privacy/bad.py:2 imports mcpeval_nb.tables",
        "mcpeval_nb/privacy/bad.py:4 imports mcpeval_nb",
    ]
    assert _front_end_violations("cli", [front], pkg) == [
        "mcpeval_nb/cli/bad.py:1 imports mcpeval_nb.privacy.shape"
    ]
