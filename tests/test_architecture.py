"""The house rules of the code layout (issues 9 and 21), checked on the source so they cannot drift:

- no import cycles between app modules, counting imports made inside functions too, except
  a Celery task module and the services it wraps (``tasks`` <-> the module whose work it queues);
- no underscore (private) name is imported from, or reached into, another module;
- the rooms (apps and packages) import only downwards, in the order of ``ROOMS`` (the map,
  ``docs/architecture.md``, states the same line), counting imports inside functions;
- the statistics core (``hvstats``) imports no Django and no app.

The checks parse the files (``ast``); nothing is imported or executed."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The order of the rooms, lowest first (docs/architecture.md, "The order"): a room imports only
#: rooms of lower layers; the rooms of one layer do not import each other.
ROOMS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("hvstats",),
    ("benchmarks",),
    ("annotation",),
    ("accounts", "studies"),
    ("judges",),
    ("agreement",),
    ("curation",),
    ("annotate",),
    ("demo",),
    ("config",),
)
#: top-level packages that are not rooms of the application
NOT_ROOMS = {"tests", "perf", "scripts", "locale", "static", "templates", "docs"}
#: what the pure statistics core never imports
FRAMEWORKS = {"django", "rest_framework", "celery", *(room for layer in ROOMS for room in layer if room != "hvstats")}
APPS = tuple(room for layer in ROOMS for room in layer)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def app_files() -> dict[str, Path]:
    files = {}
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            files[module_name(path)] = path
    return files


FILES = app_files()
MODULES = set(FILES)


def is_package(module: str) -> bool:
    return FILES[module].name == "__init__.py"


def resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute name ``from ... import`` refers to, inside ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package(module) else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def internal(name: str) -> str | None:
    """The app module ``name`` lives in (its longest known prefix), or None for a library."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in MODULES:
            return candidate
    return None


class Imports(ast.NodeVisitor):
    """Every import of one module (top level or inside a function), and the private names it
    takes from other modules."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.targets: dict[str, int] = {}  # imported app module -> first line
        self.private: list[str] = []
        self.aliases: dict[str, str] = {}  # local name -> app module it is bound to

    def add(self, target: str | None, line: int) -> None:
        if target and target != self.module:
            self.targets.setdefault(target, line)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            target = internal(alias.name)
            self.add(target, node.lineno)
            if target and alias.asname:
                self.aliases[alias.asname] = target

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = resolve(self.module, node)
        for alias in node.names:
            submodule = internal(f"{source}.{alias.name}")
            if submodule == f"{source}.{alias.name}":
                self.add(submodule, node.lineno)
                self.aliases[alias.asname or alias.name] = submodule
                continue
            target = internal(source)
            self.add(target, node.lineno)
            if target and alias.name.startswith("_") and not alias.name.startswith("__"):
                self.private.append(f"{self.module}:{node.lineno} imports {alias.name} from {source}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        value = node.value
        private = node.attr.startswith("_") and not node.attr.startswith("__")
        if private and isinstance(value, ast.Name) and value.id in self.aliases:
            self.private.append(f"{self.module}:{node.lineno} reaches into {self.aliases[value.id]}.{node.attr}")
        self.generic_visit(node)


def scan() -> dict[str, Imports]:
    out = {}
    for module, path in FILES.items():
        visitor = Imports(module)
        visitor.visit(ast.parse(path.read_text(), filename=str(path)))
        out[module] = visitor
    return out


SCANNED = scan()


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the strongly connected components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def task_edge(a: str, b: str) -> bool:
    """A service queues work through its app's task module, which calls the service back: the
    one cycle allowed (the task import inside the service is local, so nothing loads in a loop)."""
    return a.rsplit(".", 1)[-1] == "tasks" or b.rsplit(".", 1)[-1] == "tasks"


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, found in SCANNED.items():
        for target in found.targets:
            # a package's __init__ importing its own submodules is how packages work, not a cycle
            if module and target.startswith(module + ".") and is_package(module):
                continue
            graph[module].add(target)
    return graph


def test_the_checker_sees_imports():
    """Guard against a checker that finds nothing: known edges must be seen."""
    graph = import_graph()
    assert "studies.pool" in graph["studies.next_item"]
    assert "annotation.models" in graph["studies.next_item"]
    assert "core.errors" in graph["core.jobs"]
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_between_app_modules():
    graph = import_graph()
    without_tasks = {m: {t for t in targets if not task_edge(m, t)} for m, targets in graph.items()}
    cycles = strongly_connected(without_tasks)
    assert not cycles, "import cycles (break them by moving the shared piece below both): " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_no_private_name_crosses_a_module():
    private = [p for found in SCANNED.values() for p in found.private]
    assert not private, "make these names public or move them:\n" + "\n".join(private)


def room_of(module: str) -> str:
    return module.split(".", 1)[0]


def layer_of(room: str) -> int:
    for n, layer in enumerate(ROOMS):
        if room in layer:
            return n
    raise AssertionError(f"{room} is in no layer of ROOMS: add it to the order (docs/architecture.md)")


def test_every_room_is_in_the_order():
    """A new top-level package cannot escape the order: each one is listed in ``ROOMS``."""
    packages = {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if path.parent.name not in NOT_ROOMS and not path.parent.name.startswith(".")
    }
    listed = {room for layer in ROOMS for room in layer}
    assert packages == listed, f"listed but missing: {sorted(listed - packages)}; unlisted: {sorted(packages - listed)}"


def test_the_order_is_the_one_the_map_states():
    """``docs/architecture.md`` writes the order as one line; it must be this test's."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    written = " < ".join("{" + ", ".join(layer) + "}" if len(layer) > 1 else layer[0] for layer in ROOMS)
    assert f"`{written}`" in text, f"docs/architecture.md should state the order as `{written}`"


def test_rooms_import_only_downwards():
    """Every import between rooms (top level or inside a function) goes down the order; rooms of
    one layer do not import each other. The one exception is a job's own Celery task: a lower
    service may queue its work through its own room's ``tasks`` module, which is in its room."""
    offenders = []
    for module, found in SCANNED.items():
        source = room_of(module)
        for target, line in found.targets.items():
            room = room_of(target)
            if room == source:
                continue
            if layer_of(room) >= layer_of(source):
                offenders.append(f"{module}:{line} imports {target} ({source} is not above {room})")
    assert not offenders, "imports against the order of the rooms:\n" + "\n".join(sorted(offenders))


def test_the_statistics_core_imports_no_django():
    offenders = []
    for module, path in FILES.items():
        if room_of(module) != "hvstats":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            offenders += [f"{module}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in FRAMEWORKS]
    assert not offenders, "\n".join(offenders)


def test_the_order_check_sees_upward_imports():
    """Guard against a check that can never fail: a made-up upward import is caught."""
    assert layer_of("core") < layer_of("hvstats") < layer_of("benchmarks") < layer_of("annotation")
    assert layer_of("curation") > layer_of("agreement") > layer_of("judges") > layer_of("studies")
    visitor = Imports("core.errors")
    visitor.visit(ast.parse("def f():\n    from curation.policy import compile_policy\n"))
    assert "curation.policy" in visitor.targets
