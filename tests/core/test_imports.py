"""Page code imports nothing from transformers at run time outside the model loader.

transformers resolves its top-level names lazily; sessions importing a page module for the first time
in several script threads at once can then fail with "cannot import name 'BertForPreTraining' from
'transformers'" (seen in the class-load test). Types come from ``if TYPE_CHECKING:`` blocks instead.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOADERS = {"bertlens/models.py", "bertlens/synthetic.py"}  # imported once, before any page runs
MODULES = sorted(
    str(p.relative_to(ROOT)) for folder in ("bertlens", "components", "pages") for p in (ROOT / folder).rglob("*.py")
)


def runtime_transformers_imports(path: Path) -> list[int]:
    """Line numbers of module-level imports from transformers (``if TYPE_CHECKING:`` blocks excepted)."""
    lines = []
    for node in ast.parse(path.read_text()).body:
        if (
            isinstance(node, ast.ImportFrom)
            and (node.module or "").split(".")[0] == "transformers"
            or isinstance(node, ast.Import)
            and any(a.name.split(".")[0] == "transformers" for a in node.names)
        ):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("module", [m for m in MODULES if m not in LOADERS])
def test_no_runtime_import_from_transformers(module):
    assert runtime_transformers_imports(ROOT / module) == [], f"{module}: import under `if TYPE_CHECKING:`"
