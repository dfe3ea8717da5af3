"""Measure the package's structure against the targets of issue 19 and print one line per target.

    python scripts/structure.py            # the numbers, then the offenders of each target
    python scripts/structure.py --quiet    # the numbers only

Targets (exit status 1 when one is missed):

* no ``.py`` file in ``kafkawire/`` over 600 lines (``protocol/errors.py``, the error table, excepted);
* no class over 400 lines; at most 3 functions (methods and nested functions included) over 80 lines;
* no import cycle between kafkawire modules, imports inside functions counted (only those under
  ``if TYPE_CHECKING:`` are left out: they never run);
* at most 12 ``.py`` files directly in ``kafkawire/client/``;
* at most 15 places reaching another object's underscore names (``x._name`` where ``x`` is not ``self`` or
  ``cls``, and ``from m import _name`` from another module); the drop-in adapters' patching of
  kafka-python/aiokafka (``kafkawire/compat/``) and PySpark's JVM handles (``_jvm``, ``_jsparkSession``)
  are inherent and listed apart; ``super()._name`` is the class's own;
* ``duplicates`` (when on PATH): at most 40 pairs in ``kafkawire/``.

Lines are physical lines of the file (docstrings and comments included), as ``wc -l`` counts them.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "kafkawire"

MAX_FILE_LINES = 600
FILE_EXCEPTIONS = {"kafkawire/protocol/errors.py"}
MAX_CLASS_LINES = 400
MAX_FUNCTION_LINES = 80
MAX_LONG_FUNCTIONS = 3
MAX_CLIENT_FILES = 12
MAX_UNDERSCORE_REACHES = 15
MAX_DUPLICATE_PAIRS = 40


def modules() -> dict[str, Path]:
    """``{"kafkawire.client.client": path}`` for every .py file of the package."""
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_extension(name: str) -> bool:
    """True when ``name`` is a compiled extension module of the package (``kafkawire._codec``)."""
    parts = name.split(".")
    folder = ROOT.joinpath(*parts[:-1])
    return any(p.suffix in (".so", ".pyd", ".pyx") for p in folder.glob(parts[-1] + ".*"))


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (never executed)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                for child in node.body:
                    skip.update(id(n) for n in ast.walk(child))
    return skip


def import_edges(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The kafkawire modules ``name`` imports, wherever the import statement is."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_nodes(tree)
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rsplit(".", 1)[0]
    edges: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    edges.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                if sub in known:  # `from . import fetch`: the submodule
                    edges.add(sub)
                elif _is_extension(sub):  # `from . import _codec`: a compiled module, no kafkawire imports
                    continue
                elif mod in known:
                    edges.add(mod)
    edges.discard(name)
    return edges


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def sizes(mods: dict[str, Path]) -> tuple[list[str], list[str], list[str]]:
    """Files over the line limit, classes over theirs, functions over theirs (``path:line name n``)."""
    files, classes, functions = [], [], []
    for path in mods.values():
        rel = str(path.relative_to(ROOT))
        text = path.read_text()
        n = text.count("\n")
        if n > MAX_FILE_LINES and rel not in FILE_EXCEPTIONS:
            files.append(f"{rel} {n}")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            where = f"{rel}:{node.lineno} {node.name} {length}"
            if isinstance(node, ast.ClassDef) and length > MAX_CLASS_LINES:
                classes.append(where)
            elif not isinstance(node, ast.ClassDef) and length > MAX_FUNCTION_LINES:
                functions.append(where)
    return files, classes, functions


def underscore_reaches(mods: dict[str, Path]) -> tuple[list[str], list[str]]:
    """Places that reach another object's (or module's) underscore names: (counted, inherent)."""
    counted, inherent = [], []
    for name, path in mods.items():
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            hit = None
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                # super()._x: the class's own (inherited) attribute, overridden here
                inherited = isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "super"
                if not (own or inherited):
                    hit = f"{rel}:{node.lineno} .{node.attr}"
            elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
                privates = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                # `from . import _impl` and friends name a private module of this package: not another object's.
                mod = node.module or ""
                if privates and mod and not mod.rsplit(".", 1)[-1].startswith("_"):
                    hit = f"{rel}:{node.lineno} import {', '.join(privates)} from {'.' * node.level}{mod}"
            if hit is None:
                continue
            if name.startswith("kafkawire.compat") or any(j in hit for j in ("._jvm", "._gateway", "._jsparkSession")):
                inherent.append(hit)
            else:
                counted.append(hit)
    return counted, inherent


def duplicate_pairs() -> tuple[int | None, str]:
    tool = shutil.which("duplicates")
    if tool is None:
        return None, "duplicates not on PATH"
    out = subprocess.run(
        [tool, "--repo", str(PKG), "--most", "200", "--seconds", "120"], capture_output=True, text=True, check=False
    ).stdout
    first = out.splitlines()[0] if out else ""
    word = first.split(" ", 1)[0]
    return (int(word) if word.isdigit() else 0 if first.startswith("no duplicates") else None), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="the numbers only")
    args = parser.parse_args()
    mods = modules()
    graph = {name: import_edges(name, path, mods) for name, path in mods.items()}
    found_cycles = cycles(graph)
    files, classes, functions = sizes(mods)
    client_files = sorted(p.name for p in (PKG / "client").glob("*.py"))
    counted, inherent = underscore_reaches(mods)
    pairs, dup_out = duplicate_pairs()

    rows = [
        (f"files over {MAX_FILE_LINES} lines (protocol/errors.py excepted)", len(files), 0, files),
        (f"classes over {MAX_CLASS_LINES} lines", len(classes), 0, classes),
        (f"functions over {MAX_FUNCTION_LINES} lines", len(functions), MAX_LONG_FUNCTIONS, functions),
        ("import cycles (lazy imports counted)", len(found_cycles), 0, [" <-> ".join(c) for c in found_cycles]),
        (".py files directly in kafkawire/client/", len(client_files), MAX_CLIENT_FILES, client_files),
        ("places reaching another object's underscore names", len(counted), MAX_UNDERSCORE_REACHES, counted),
    ]
    if pairs is not None:
        rows.append(("duplicates kafkawire: pairs", pairs, MAX_DUPLICATE_PAIRS, []))
    failed = False
    for label, value, limit, detail in rows:
        ok = value <= limit
        failed |= not ok
        print(f"{'ok  ' if ok else 'MISS'} {label}: {value} (target <= {limit})")
        if not args.quiet:
            for line in detail:
                print(f"       {line}")
    if not args.quiet:
        print(f"     inherent underscore reaches (compat drop-in patching, PySpark's _jvm): {len(inherent)}")
        if pairs is not None:
            print("     " + dup_out.replace("\n", "\n     ").rstrip())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
