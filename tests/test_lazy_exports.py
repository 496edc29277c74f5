"""Packages that load their public names on first use (``mcpeval_nb._lazy``): the export table and the
typed mirror agree, every name resolves to its module's object, and importing one module of such a
package runs none of its other modules (what keeps the shim's start-up short, docs/performance.md)."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

LAZY_PACKAGES = ("mcpeval_nb", "mcpeval_nb.analysis", "mcpeval_nb.capture", "mcpeval_nb.privacy",
                 "mcpeval_nb.root", "mcpeval_nb.transport")


def _mirror(package: str) -> dict[str, str]:
    """name -> module of each import under ``if TYPE_CHECKING:`` in the package's ``__init__``."""
    path = Path(importlib.import_module(package).__file__ or "")
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.level == 1, ast.unparse(stmt)
                for alias in stmt.names:
                    assert alias.asname == alias.name, f"{alias.name} must be re-exported as itself"
                    found[alias.name] = f".{stmt.module}"
    return found


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_the_export_table_and_the_typed_mirror_agree_and_every_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    table: dict[str, tuple[str, ...]] = module._EXPORTS
    home = {name: where for where, names in table.items() for name in names}
    assert sum(len(names) for names in table.values()) == len(home), "a name is exported twice"
    assert _mirror(package) == home
    assert set(home) <= set(module.__all__) and set(home) <= set(dir(module))
    for name, where in home.items():
        assert getattr(module, name) is getattr(importlib.import_module(where, package), name), name
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018


@pytest.mark.parametrize(("module", "package", "also"), [
    ("mcpeval_nb.privacy.grammar", "mcpeval_nb.privacy", ()),
    ("mcpeval_nb.transport.environ", "mcpeval_nb.transport", ()),
    ("mcpeval_nb.capture.spawn", "mcpeval_nb.capture", ()),
    ("mcpeval_nb.root.where", "mcpeval_nb.root", ("mcpeval_nb.root.layout",)),
    ("mcpeval_nb.root.salt", "mcpeval_nb.root", ("mcpeval_nb.root.layout",)),
])
def test_importing_one_module_of_a_package_runs_no_other(module: str, package: str,
                                                         also: tuple[str, ...]) -> None:
    code = (f"import sys, json; import {module}; "
            f"print(json.dumps(sorted(m for m in sys.modules if m.startswith('{package}.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == sorted([module, *also])


@pytest.mark.parametrize("first", ["import mcpeval_nb.privacy.shape", "from mcpeval_nb.privacy import shape",
                                   "from mcpeval_nb.privacy.shape import EnumIndex"])
def test_privacy_shape_is_the_function_whichever_import_comes_first(first: str) -> None:
    """``privacy.shape`` names a function and its module; the package keeps the name for the function
    (loaded on first use) however the module was imported."""
    code = (f"{first}\nimport mcpeval_nb.privacy as p\nfrom mcpeval_nb.privacy.shape import shape\n"
            "print(p.shape is shape and callable(shape))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"


@pytest.mark.parametrize("module", ["mcpeval_nb.serve.listener", "mcpeval_nb.configuration",
                                    "mcpeval_nb.triage.promote", "mcpeval_nb.triage.findings",
                                    "mcpeval_nb.triage.index.build"])
def test_serve_config_and_the_findings_commands_start_without_pandas(module: str) -> None:
    """pandas costs 0.3-0.4 s of CPU per interpreter; these load it only if a call needs a frame (a trend
    delta, a catalog status), not to start (``wilson_interval`` is stdlib, ``analysis`` loads lazily)."""
    code = f"import sys; import {module}; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
