"""English sentences to fit a static table toward its model (``embeddings/refit.py``).

The first paragraph of every docstring of the standard library and of a fixed list of the
packages every install of the service has (its runtime dependencies and the ``offline``
extra that builds MiniLM's table), read from the source with ``ast`` (nothing is imported),
in path order: the same Python and the same pinned versions (constraints.txt) give the same
sentences (how many: docs/quality.md, "The static table fitted to its model's sentences").
Docstrings describe what code does ("Return the ...", "Create a ... for ..."), as tool
descriptions do, and hold nothing of the evaluation sets.

A paragraph is kept when it has 5 to 40 words and is mostly letters (at least 85% letters
and spaces: no code, tables or doctest lines), once.
"""

from __future__ import annotations

import ast
import importlib.util
import sysconfig
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

#: The packages read besides the standard library, in this order (those missing are skipped).
PACKAGES = (
    "numpy",
    "scipy",
    "sklearn",
    "torch",
    "transformers",
    "sentence_transformers",
    "huggingface_hub",
    "networkx",
    "sympy",
    "jinja2",
    "redis",
    "litestar",
    "anyio",
    "httpx",
    "prometheus_client",
    "msgspec",
    "onnxruntime",
    "tokenizers",
    "bm25s",
)
#: Folders not read: tests, and the standard library's GUI, demos and bundled installers.
_SKIP = frozenset(
    {"test", "tests", "testing", "idlelib", "lib2to3", "site-packages", "tkinter"}
    | {"turtledemo", "ensurepip", "pydoc_data", "__phello__"}
)
_WORDS = (5, 40)
_LETTERS = 0.85
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def docstring_sentences(packages: Sequence[str] = PACKAGES) -> list[str]:
    """Every kept first paragraph, once, in the order the folders and files are read."""
    seen: dict[str, None] = {}
    for root in _roots(packages):
        for path in sorted(root.rglob("*.py")):
            if _SKIP.isdisjoint(path.relative_to(root).parts[:-1]):
                seen.update(dict.fromkeys(_paragraphs(path)))
    return list(seen)


def _roots(packages: Sequence[str]) -> Iterator[Path]:
    yield Path(sysconfig.get_paths()["stdlib"])
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            yield Path(next(iter(spec.submodule_search_locations)))


def _paragraphs(path: Path) -> Iterator[str]:
    """The kept first paragraphs of one source file's docstrings (none if it does not parse)."""
    try:
        with warnings.catch_warnings():  # an invalid escape is a warning, not a reason to skip
            warnings.simplefilter("ignore")
            tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        doc = ast.get_docstring(node) if isinstance(node, _DOCUMENTED) else None
        if doc:
            paragraph = " ".join(doc.strip().split("\n\n")[0].split())
            if _kept(paragraph):
                yield paragraph


def _kept(paragraph: str) -> bool:
    words = len(paragraph.split())
    letters = sum(c.isalpha() or c == " " for c in paragraph)
    return _WORDS[0] <= words <= _WORDS[1] and letters >= _LETTERS * len(paragraph)
