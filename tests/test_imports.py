"""Imports point one way (docs/architecture.md, "The import rule"): the package's floors, no import cycle
(not even through an import inside a function), no private name imported across modules, and front ends
that import only the public package.

Every import statement of the package counts, wherever it is: at the top of a module, inside a function,
or under ``if TYPE_CHECKING:`` (for the floors; a type-only import runs nowhere, so it makes no cycle).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import mcpeval_nb

PACKAGE = Path(mcpeval_nb.__file__).resolve().parent

#: The floors, lowest first.  A module imports from its own top-level package, or from a package on a
#: lower floor: never from a higher floor, and never from another package on its own floor (peers do not
#: know each other).  ``""`` is the public ``mcpeval_nb/__init__.py``.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("_version", "_lazy", "_frozen", "errors", "limits", "junit", "schemacheck", "htmltext", "textsafe",
     "progress", "wilson"),                     # stdlib
    ("clock", "jsonfmt", "root"),               # time, JSON text, the capture root
    ("privacy",),                               # the write boundary
    ("journal", "transport"),                   # journals; MCP clients
    ("tables", "governance"),                   # Arrow tables; retention, erase, the audit's home
    ("analysis", "capture"),                    # functions over tables; the shims
    ("probe", "scale"),                         # probing; the engines
    ("catalog", "sizes", "triage"),             # over probe: catalogs, result sizes, findings
    ("gates", "review", "serve", "configuration"),  # over them: gates, doctor/share, serve, config
    ("mock",),                                  # the recorded-behaviour mock and replay (on serve's rpc)
    ("", "testing"),                            # the public package; fixtures
    ("charts",),                                # pictures, over the public package
    ("cli", "widgets", "demo"),                 # front ends (panels draw with charts)
    ("__main__",),                              # python -m mcpeval_nb: the CLI
)
RANKS: dict[str, int] = {name: floor for floor, names in enumerate(FLOORS) for name in names}
# These import only what `mcpeval_nb` exports (and each other within their own package); the panels
# also draw with `charts`, so that a panel and a notebook cell show the same picture.
FRONT_ENDS = ("cli", "charts", "widgets")
#: Private bottom modules any layer may import (the version read once; the one lazy-export helper; the one
#: immutable-value base).
BOTTOM_PRIVATE = ("mcpeval_nb._version", "mcpeval_nb._lazy", "mcpeval_nb._frozen")
ALSO_ALLOWED = {"widgets": ("charts",)}


@dataclass(frozen=True)
class Import:
    """One imported module (absolute name), where, and what."""

    line: int
    target: str
    names: tuple[str, ...]  # the names a ``from X import ...`` takes from ``target`` (empty otherwise)
    typing_only: bool       # under ``if TYPE_CHECKING:``


def _module_name(path: Path, pkg: Path = PACKAGE) -> str:
    parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str, pkg: Path = PACKAGE) -> bool:
    """True when ``name`` (``mcpeval_nb.a.b``) is a module or package of ours (a compiled extension
    module, such as ``tables._canon``, counts: its C source sits beside it)."""
    rel = pkg.parent.joinpath(*name.split("."))
    return any(p.is_file() for p in (rel.with_suffix(".py"), rel / "__init__.py", rel.with_suffix(".c")))


def _typing_only(tree: ast.AST) -> set[int]:
    """The ids of the import nodes under an ``if TYPE_CHECKING:``."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return found


def _imports(path: Path, pkg: Path = PACKAGE) -> list[Import]:
    """Every module an import statement in ``path`` names (absolute), with its line number.

    ``from X import a`` names ``X.a`` when that is a module, else ``X`` (taking the name ``a`` from it).
    """
    module = _module_name(path, pkg)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    typing = _typing_only(tree)
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(Import(node.lineno, alias.name, (), id(node) in typing) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if _is_module(sub, pkg):
                    found.append(Import(node.lineno, sub, (), id(node) in typing))
                else:
                    found.append(Import(node.lineno, base, (alias.name,), id(node) in typing))
    return found


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "mcpeval_nb":
        return None
    return parts[1] if len(parts) > 1 else ""


def _sources(pkg: Path = PACKAGE) -> list[Path]:
    return sorted(pkg.rglob("*.py"))


# -- floors -----------------------------------------------------------------------------------------------
def _violations(paths: list[Path], pkg: Path = PACKAGE) -> list[str]:
    found = []
    for path in paths:
        own = _layer(_module_name(path, pkg))
        if own is None:
            continue
        for imp in _imports(path, pkg):
            layer = _layer(imp.target)
            if layer is None or layer == own:
                continue
            if own not in RANKS or layer not in RANKS or RANKS[layer] >= RANKS[own]:
                found.append(f"{path.relative_to(pkg.parent)}:{imp.line} imports {imp.target}")
    return found


def test_every_package_of_the_tree_has_a_floor() -> None:
    packages = {_layer(_module_name(path)) for path in _sources()}
    assert packages - set(RANKS) == set(), "give the new package its floor in FLOORS (and in docs)"
    assert set(RANKS) - packages - {"findings", "phases"} == set(), "a floor names a package that is gone"


def test_imports_point_down_the_floors_only() -> None:
    assert _violations(_sources()) == []


# -- cycles -----------------------------------------------------------------------------------------------
def _graph(paths: list[Path], pkg: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules importing it runs, including the packages above each one (importing
    ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first, unless the importer is inside them)."""
    graph: dict[str, set[str]] = {}
    for path in paths:
        own = _module_name(path, pkg)
        edges = graph.setdefault(own, set())
        for imp in _imports(path, pkg):
            if imp.typing_only or _layer(imp.target) is None:
                continue
            parts = imp.target.split(".")
            for depth in range(2, len(parts) + 1):
                ancestor = ".".join(parts[:depth])
                inside = (own + ".").startswith(ancestor + ".")
                if ancestor != own and not inside and _is_module(ancestor, pkg):
                    edges.add(ancestor)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_no_import_cycle_not_even_through_an_import_inside_a_function() -> None:
    assert _cycles(_graph(_sources())) == []


# -- private names ----------------------------------------------------------------------------------------
def _private_imports(paths: list[Path], pkg: Path = PACKAGE) -> list[str]:
    """``from X import _name`` where X is another module (a package's own private submodules, such as
    the compiled ``tables._canon``, may be imported inside that package)."""
    found = []
    for path in paths:
        own = _module_name(path, pkg)
        for imp in _imports(path, pkg):
            if _layer(imp.target) is None or imp.target == own:
                continue
            for name in imp.names:
                if name.startswith("_") and not name.startswith("__"):
                    found.append(f"{path.relative_to(pkg.parent)}:{imp.line} imports {imp.target}.{name}")
            tail = imp.target.rpartition(".")[2]
            package = own if path.name == "__init__.py" else own.rpartition(".")[0]
            # (``_version``, the version every layer reads, and ``_lazy``, the lazy public names of the
            # package and its subpackages, are bottom modules, private by convention)
            shared = imp.target.rpartition(".")[0] == package or imp.target in BOTTOM_PRIVATE
            if tail.startswith("_") and not tail.startswith("__") and not shared:
                found.append(f"{path.relative_to(pkg.parent)}:{imp.line} imports {imp.target}")
    return found


def test_no_private_name_is_imported_across_modules() -> None:
    assert _private_imports(_sources()) == []


# -- front ends ------------------------------------------------------------------------------------------
def _front_end_violations(front: str, paths: list[Path], pkg: Path = PACKAGE) -> list[str]:
    found = []
    for path in paths:
        for imp in _imports(path, pkg):
            if _layer(imp.target) in (None, "", front, *ALSO_ALLOWED.get(front, ())):
                continue  # third-party, stdlib, `mcpeval_nb` itself, the front end's own package
            found.append(f"{path.relative_to(pkg.parent)}:{imp.line} imports {imp.target}")
    return found


@pytest.mark.parametrize("front", FRONT_ENDS)
def test_front_ends_import_only_the_public_package(front: str) -> None:
    paths = [PACKAGE / f"{front}.py"] if (PACKAGE / f"{front}.py").exists() else []
    paths += sorted((PACKAGE / front).rglob("*.py")) if (PACKAGE / front).is_dir() else []
    assert _front_end_violations(front, paths) == []


# -- the checks can fail ----------------------------------------------------------------------------------
def _scratch(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "mcpeval_nb"
    for rel, text in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for directory in [pkg, *(p for p in pkg.rglob("*") if p.is_dir())]:
        (directory / "__init__.py").touch()
    return pkg


def test_the_import_checks_catch_violations(tmp_path: Path) -> None:
    pkg = _scratch(tmp_path, {
        "privacy/shape.py": "",
        "privacy/bad.py": "from ..journal import append_record\nimport mcpeval_nb.tables\n"
                          "from . import shape\nfrom mcpeval_nb import __version__\n"
                          "from ..clock import now_ms\n",
        "journal/peer.py": "def f():\n    from ..transport import session\n",
        "tables/a.py": "from .b import x\n",
        "tables/b.py": "def f():\n    from .a import y\n",
        "tables/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import z\n",
        "tables/d.py": "from .c import w\nfrom .a import _hidden\n",
        "cli/bad.py": "from ..privacy import shape\nfrom mcpeval_nb import CallRecord\nimport click\n"
                      "from . import bad\n",
    })
    assert _violations([pkg / "privacy" / "bad.py", pkg / "journal" / "peer.py"], pkg) == [
        "mcpeval_nb/privacy/bad.py:1 imports mcpeval_nb.journal",
        "mcpeval_nb/privacy/bad.py:2 imports mcpeval_nb.tables",
        "mcpeval_nb/privacy/bad.py:4 imports mcpeval_nb",
        "mcpeval_nb/journal/peer.py:2 imports mcpeval_nb.transport",  # a peer on the same floor
    ]  # privacy -> clock is down a floor: allowed
    tables = sorted((pkg / "tables").glob("*.py"))
    assert _cycles(_graph(tables, pkg)) == [["mcpeval_nb.tables.a", "mcpeval_nb.tables.b"]]  # not c <-> d
    assert _private_imports(tables, pkg) == [
        "mcpeval_nb/tables/d.py:2 imports mcpeval_nb.tables.a._hidden"
    ]
    assert _front_end_violations("cli", [pkg / "cli" / "bad.py"], pkg) == [
        "mcpeval_nb/cli/bad.py:1 imports mcpeval_nb.privacy.shape"
    ]


def test_importing_a_module_runs_the_packages_above_it(tmp_path: Path) -> None:
    # a/__init__ imports a.x; b.y imports a.x: b.y -> a -> a.x, and a.x importing b.y is a cycle.
    pkg = _scratch(tmp_path, {"a/x.py": "from ..b import y\n", "b/y.py": "from ..a import x\n"})
    (pkg / "a" / "__init__.py").write_text("from . import x\n")
    graph = _graph(sorted(pkg.rglob("*.py")), pkg)
    assert graph["mcpeval_nb.b.y"] == {"mcpeval_nb.a", "mcpeval_nb.a.x"}
    assert _cycles(graph) == [["mcpeval_nb.a", "mcpeval_nb.a.x", "mcpeval_nb.b.y"]]
