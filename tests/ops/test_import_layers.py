"""The code's shape (docs/architecture.md): imports point down only, with no cycle, counting imports made inside
functions as well as at the top of a module.

    bertlens  <-  components.services  <-  components.state  <-  components.ui  <-  components.views.<page>  <-  pages/, app.py

No view imports another page's views (what two pages share is a public ``components.ui`` part), and the core
``bertlens`` imports neither Streamlit nor anything above it. The graph is read from the source (``ast``), so a
lazy import cannot hide an edge.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("bertlens", "components.services", "components.state", "components.ui", "components.views", "pages")
SOURCES = ("bertlens", "components", "pages", "app.py")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    found = {}
    for source in SOURCES:
        paths = [ROOT / source] if source.endswith(".py") else sorted((ROOT / source).rglob("*.py"))
        found |= {module_name(path): path for path in paths}
    return found


def imported_names(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (a function's body too); ``from a import b`` counts as a.b
    when a.b is a module, else as a."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


@cache
def graph() -> dict[str, set[str]]:
    """Project module -> the project modules it imports."""
    known = modules()
    return {name: {i for i in imported_names(path) if i in known and i != name} for name, path in known.items()}


def layer(module: str) -> int:
    if module == "app":
        return len(LAYERS) - 1
    return max(i for i, prefix in enumerate(LAYERS) if module == prefix or module.startswith(prefix + "."))


def page_of(module: str) -> str | None:
    """The page a view module belongs to (``components.views.attention.steps`` -> attention)."""
    parts = module.split(".")
    return parts[2] if parts[:2] == ["components", "views"] and len(parts) > 2 else None


def test_every_module_is_in_a_layer():
    stray = [
        m
        for m, path in modules().items()
        if m.count(".") == 1 and m.startswith("components.") and path.name != "__init__.py"
    ]
    assert not stray, f"modules beside the layers, in components/ itself: {stray}"


def test_imports_point_down_only():
    upward = [
        f"{module} -> {target}"
        for module, targets in graph().items()
        for target in targets
        if layer(target) > layer(module) and not target.startswith(module + ".")  # a package may name its modules
    ]
    assert not upward, "imports that point up:\n" + "\n".join(sorted(upward))


def test_no_view_imports_another_pages_views():
    crossing = [
        f"{module} -> {target}"
        for module, targets in graph().items()
        for target in targets
        if page_of(module) and page_of(target) and page_of(module) != page_of(target)
    ]
    assert not crossing, "views that import another page's views (share a components.ui part):\n" + "\n".join(crossing)


def test_pages_import_no_other_page():
    crossing = [
        f"{m} -> {t}"
        for m, targets in graph().items()
        for t in targets
        if m.startswith("pages.") and t.startswith("pages.")
    ]
    assert not crossing, crossing


def test_no_import_cycle():
    cycles, state = [], dict.fromkeys(graph(), 0)  # 0 new, 1 on the path, 2 done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph()[module]):
            if state[target] == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif state[target] == 0:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph()):
        if state[module] == 0:
            visit(module, [module])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


@pytest.mark.parametrize("path", sorted((ROOT / "bertlens").rglob("*.py")), ids=lambda p: p.name)
def test_the_core_imports_no_streamlit_and_nothing_above_it(path):
    names = imported_names(path)
    assert not {n for n in names if n.split(".")[0] in ("streamlit", "components", "pages", "scripts")}, path
