"""The house rules of the code layout (issues 9 and 21), checked on the source so they cannot drift:

- no import cycles between app modules, counting imports made inside functions and package
  ``__init__`` modules too; the one edge left out is a service's function-local import of a
  task of its room's ``tasks`` module, when it is the one module that takes that task and is no
  models module (:func:`queue_edges`): jobs are sent through the sender each tasks module
  registers (``core.jobs.register_sender``), so a model never imports its task;
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


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def app_files(root: Path = ROOT, apps: tuple[str, ...] = APPS) -> dict[str, Path]:
    files = {}
    for app in apps:
        for path in sorted((root / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            files[module_name(path, root)] = path
    return files


class Tree:
    """The app modules of a source tree (the project's, or a made-up one in a test) and what
    each imports."""

    def __init__(self, root: Path = ROOT, apps: tuple[str, ...] = APPS) -> None:
        self.files = app_files(root, apps)
        self.modules = set(self.files)
        self.scanned: dict[str, Imports] = {}
        for module, path in self.files.items():
            visitor = Imports(module, self)
            visitor.visit(ast.parse(path.read_text(), filename=str(path)))
            self.scanned[module] = visitor

    def is_package(self, module: str) -> bool:
        return self.files[module].name == "__init__.py"

    def resolve(self, module: str, node: ast.ImportFrom) -> str:
        """The absolute name ``from ... import`` refers to, inside ``module``."""
        if not node.level:
            return node.module or ""
        base = module.split(".") if self.is_package(module) else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join([*base, node.module] if node.module else base)

    def internal(self, name: str) -> str | None:
        """The app module ``name`` lives in (its longest known prefix), or None for a library."""
        parts = name.split(".")
        for n in range(len(parts), 0, -1):
            candidate = ".".join(parts[:n])
            if candidate in self.modules:
                return candidate
        return None


#: what a module takes from another when it binds the module itself (``import a.tasks``,
#: ``from . import tasks``): everything in it
WHOLE = "*"


class Imports(ast.NodeVisitor):
    """Every import of one module (top level or inside a function), which of them are made only
    inside functions, the names it takes from each module, and the private names it takes from
    other modules."""

    def __init__(self, module: str, tree: Tree) -> None:
        self.module = module
        self.tree = tree
        self.targets: dict[str, int] = {}  # imported app module -> first line
        self.loaded: set[str] = set()  # the targets imported when the module loads (not in a function)
        self.taken: dict[str, set[str]] = defaultdict(set)  # target -> names taken from it
        self.private: list[str] = []
        self.aliases: dict[str, str] = {}  # local name -> app module it is bound to
        self.depth = 0  # how many functions the visitor is inside

    def add(self, target: str | None, line: int, name: str) -> None:
        if target and target != self.module:
            self.targets.setdefault(target, line)
            self.taken[target].add(name)
            if not self.depth:
                self.loaded.add(target)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.visit_FunctionDef(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            target = self.tree.internal(alias.name)
            self.add(target, node.lineno, WHOLE)
            if target and alias.asname:
                self.aliases[alias.asname] = target

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = self.tree.resolve(self.module, node)
        for alias in node.names:
            submodule = self.tree.internal(f"{source}.{alias.name}")
            if submodule == f"{source}.{alias.name}":
                self.add(submodule, node.lineno, WHOLE)
                self.aliases[alias.asname or alias.name] = submodule
                continue
            target = self.tree.internal(source)
            self.add(target, node.lineno, alias.name)
            if target and alias.name.startswith("_") and not alias.name.startswith("__"):
                self.private.append(f"{self.module}:{node.lineno} imports {alias.name} from {source}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        value = node.value
        private = node.attr.startswith("_") and not node.attr.startswith("__")
        if private and isinstance(value, ast.Name) and value.id in self.aliases:
            self.private.append(f"{self.module}:{node.lineno} reaches into {self.aliases[value.id]}.{node.attr}")
        self.generic_visit(node)


TREE = Tree()
FILES = TREE.files
SCANNED = TREE.scanned


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


def is_tasks(module: str) -> bool:
    return module.rsplit(".", 1)[-1] == "tasks"


def is_models(module: str) -> bool:
    return "models" in module.split(".")


def queue_edges(tree: Tree) -> set[tuple[str, str]]:
    """The one cycle allowed: a service queues a job's work through its room's ``tasks`` module,
    which calls the service back. The edge service -> tasks is left out of the cycle check when

    - both are in the same room, and the service imports the task module only inside a function
      (so nothing loads in a loop);
    - the service is the one module that takes the tasks it takes (one sender per task: any
      other module taking the same task, or the whole tasks module, makes both edges count);
    - the service is not a models module (the task module loads the models: a model that
      imports its task is the circle this rule exists to stop; jobs are sent through the
      sender their tasks module registers, ``core.jobs.register_sender``).

    The edge tasks -> service always counts, so any other cycle through either is still found."""
    takers: dict[tuple[str, str], set[str]] = defaultdict(set)
    for module, found in tree.scanned.items():
        for target, names in found.taken.items():
            for name in names:
                takers[(target, name)].add(module)
    edges = set()
    for module, found in tree.scanned.items():
        for target in found.targets:
            names = found.taken[target]
            if (
                is_tasks(target)
                and room_of(target) == room_of(module)
                and not is_models(module)
                and target not in found.loaded
                and WHOLE not in names
                and all(takers[(target, name)] == {module} for name in names)
            ):
                edges.add((module, target))
    return edges


def import_graph(tree: Tree = TREE) -> dict[str, set[str]]:
    """Every import between app modules, package ``__init__`` modules included (a package that
    imports a submodule which imports a name back from the package is a cycle like any other)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for module, found in tree.scanned.items():
        graph[module] |= set(found.targets)
    return graph


def import_cycles(tree: Tree = TREE) -> list[list[str]]:
    """The import cycles of ``tree``, but for the edges :func:`queue_edges` allows."""
    allowed = queue_edges(tree)
    graph = {m: {t for t in targets if (m, t) not in allowed} for m, targets in import_graph(tree).items()}
    return strongly_connected(graph)


def test_the_checker_sees_imports():
    """Guard against a checker that finds nothing: known edges must be seen."""
    graph = import_graph()
    assert "studies.pool" in graph["studies.next_item"]
    assert "annotation.models" in graph["studies.next_item"]
    assert "core.errors" in graph["core.jobs"]
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_between_app_modules():
    cycles = import_cycles()
    assert not cycles, "import cycles (break them by moving the shared piece below both): " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def write_tree(root: Path, files: dict[str, str]) -> Tree:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Tree(root, ("shop",))


SHOP = {
    "shop/__init__.py": "",
    "shop/models.py": "class Order: ...\n",
    # the allowed pair: the service queues its task from inside a function, the task calls it
    "shop/services.py": "from .models import Order\n\ndef work(): ...\n\ndef start():\n    from .tasks import run\n",
    "shop/tasks.py": "from .models import Order\nfrom .services import work\n\ndef run(): ...\n",
}


def test_the_cycle_check_allows_only_the_service_that_queues_its_task(tmp_path):
    """Guard against a cycle check that can never fail: on a made-up tree, the service <-> task
    pair passes, and a model importing its task (even inside a method), a second module taking
    the same task, and a cycle through a package ``__init__`` are each caught."""
    assert import_cycles(write_tree(tmp_path / "pair", SHOP)) == []

    model_sends = {**SHOP, "shop/models.py": "class Order:\n    def send(self):\n        from .tasks import run\n"}
    assert import_cycles(write_tree(tmp_path / "model", model_sends)) == [
        ["shop.models", "shop.services", "shop.tasks"]  # tasks -> services -> models -> tasks
    ]

    two_senders = {**SHOP, "shop/views.py": "def retry():\n    from .tasks import run\n"}
    assert import_cycles(write_tree(tmp_path / "two", two_senders)) == [["shop.services", "shop.tasks"]]

    package = {
        **SHOP,
        "shop/backends/__init__.py": "from .ahead import Ahead\n\nREGISTRY = {}\n",
        "shop/backends/ahead.py": "from . import REGISTRY\n\nclass Ahead: ...\n",
    }
    assert import_cycles(write_tree(tmp_path / "package", package)) == [["shop.backends", "shop.backends.ahead"]]


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
    visitor = Imports("core.errors", TREE)
    visitor.visit(ast.parse("def f():\n    from curation.policy import compile_policy\n"))
    assert "curation.policy" in visitor.targets


# ------------------------------------------------------------------- the strata columns, once
def strata_restated(files: dict[str, Path]) -> list[str]:
    """Modules that spell out the indexed strata columns (every name of
    ``benchmarks.base.STRATA_KEYS`` in one tuple, list or set literal) instead of reading that
    tuple: the map says the columns are named once, and a restated list drifts when one is added."""
    from benchmarks.base import STRATA_KEYS

    wanted, found = set(STRATA_KEYS), []
    for module, path in files.items():
        if module == "benchmarks.base" or ".migrations." in module:
            continue  # the definition itself; migrations freeze the schema of their day
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                names = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                if wanted <= names:
                    found.append(f"{module}:{node.lineno}")
    return found


def test_the_strata_columns_are_named_once():
    assert strata_restated(app_files()) == []


def test_the_strata_check_sees_a_restated_list(tmp_path):
    path = tmp_path / "api.py"
    path.write_text('FIELDS = ["id", "country", "region", "generator", "category", "dimension", "meta"]\n')
    assert strata_restated({"shop.api": path}) == ["shop.api:1"]


def test_the_tests_mirror_the_rooms():
    """Each room's tests live in ``tests/<room>/`` (docs/testing.md), so a change to a room has
    one folder of checks beside it."""
    missing = [room for room in APPS if not (ROOT / "tests" / room / "__init__.py").is_file()]
    assert missing == []
