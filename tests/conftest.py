"""Project-wide fixtures.

Services: `scripts/test` (make test) starts PostgreSQL + Redis and sets DATABASE_URL,
REDIS_URL and HV_TEST_SERVICES=1. With CI or HV_TEST_SERVICES set, missing services fail
the run; in a bare local `pytest` run, tests needing them are skipped.

Fixtures:
  redis_url              session  REDIS_URL (fail in CI / skip locally when absent)
  celery_worker_process  function a real `celery -A config worker` subprocess on Redis,
                                  reading the pytest-django test database; the in-process
                                  app (config.celery.app) sends through Redis meanwhile,
                                  with a Redis result backend. Use it with
                                  @pytest.mark.django_db(transaction=True) so rows are
                                  committed and visible to the worker.
  browser                session  headless Debian Chromium through Playwright
  page                   function a new page in a fresh browser context
  live_server                     (pytest-django)
  shared_demo            class    the whole demo seeded once for the demo classes (named *Demo),
                                  which run one after another; rolled back after the last;
                                  each test in a savepoint inside it
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from tests import services  # noqa: E402 - after the repository root is on sys.path

# Playwright's sync API runs an event loop in the test thread; Django's async-safety check
# would then refuse ORM calls made by tests and by live_server fixtures.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
# Subprocesses (Celery workers, manage.py) refuse the development key with DEBUG off; scripts/test
# sets one, a bare `pytest` gets this (the settings of this process allow it under pytest).
os.environ.setdefault("SECRET_KEY", "hv-bare-pytest-key-" + "x" * 40)


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hashing():
    """Passwords are hashed with MD5 in every test: Django's PBKDF2 costs about 0.25 s of CPU per
    hash by design, and the tests create and log in hundreds of users. No test checks the hasher
    (the deployment's settings keep PBKDF2); the Celery worker and other subprocesses keep theirs.
    Fixtures that also set it (``settings.PASSWORD_HASHERS``) stay correct on their own."""
    from django.test import override_settings

    fast = override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"])
    fast.enable()
    yield
    fast.disable()


@pytest.fixture(autouse=True)
def _english_by_default():
    """Each test starts in English: a request in another language activates it for the
    thread, and an xdist worker runs many tests on one thread."""
    from django.utils import translation

    translation.activate("en")
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty cache: failed-login and API throttle counts (core.security)
    are per client address, and every test client is 127.0.0.1."""
    from django.core.cache import cache

    cache.clear()
    yield


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def _need_service(reason: str) -> None:
    """Fail when services are required (CI / make test), skip in a bare local run."""
    if services.services_required():
        pytest.fail(f"{reason} (required: CI or HV_TEST_SERVICES=1 is set)", pytrace=False)
    pytest.skip(f"{reason}; run `make test` to get PostgreSQL + Redis + Chromium")


# ------------------------------------------------------------------------- slow tests
#: modules whose tests are slow by nature (`make test-fast` leaves them out; `make test` and CI
#: run everything): killed workers, the schemathesis pass, migrations replayed from old releases,
#: LaTeX compiled by pdflatex
SLOW_MODULES = {
    "test_worker_faults.py",
    "test_api_fuzz.py",
    "test_migrations.py",
    "test_broker_unreachable.py",
    "test_tables_latex.py",
    "test_tables_humans_only.py",  # every test compiles its tables with pdflatex
}
#: fixtures that start a process or a browser, or build and run a torch model: a test using one
#: is slow (tiny_model / tiny_clip / tiny_vlm: random transformers models made and run on CPU)
SLOW_FIXTURES = {"celery_worker_process", "live_server", "browser", "page", "tiny_model", "tiny_clip", "tiny_vlm"}
#: single slow tests are marked in their file (``@pytest.mark.slow``, with the reason): the real
#: MiniLM loaded, pdflatex, xgettext, perf/gpu_check.py; a hypothesis test is slow by nature
#: (many generated examples), found here by hypothesis' own attribute


#: what a test needs a server for (the embedded pass leaves these out: the first pass ran them on
#: PostgreSQL and Redis): Redis, a Celery worker sharing the database, PostgreSQL's concurrency
NEEDS_SERVERS_FIXTURES = {"redis_url", "_celery_worker_session", "celery_worker_process", "postgres_only"}
NEEDS_SERVERS_MARKERS = ("celery_worker", "postgres")
#: how a test reaches the database (pytest-django's fixtures and marker): the embedded pass keeps
#: only these tests, since a test that never touches the database cannot tell SQLite from PostgreSQL
DB_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback", "live_server"}


def is_slow(item) -> bool:
    fixtures = set(getattr(item, "fixturenames", ()))
    return bool(
        item.get_closest_marker("slow")
        or item.get_closest_marker("browser")
        or item.get_closest_marker("celery_worker")
        or fixtures & SLOW_FIXTURES
        or item.path.name in SLOW_MODULES
        or getattr(getattr(item, "obj", None), "is_hypothesis_test", False)
    )


def uses_database(item) -> bool:
    return bool(item.get_closest_marker("django_db") or set(getattr(item, "fixturenames", ())) & DB_FIXTURES)


#: test files of the code whose SQL differs between the databases; the embedded pass must keep
#: tests of each (a check at collection, below), so that no change of marks or fixtures drops
#: them from SQLite unnoticed. Add a file here when you write such code.
DIALECT_TEST_FILES = {
    "tests/annotate/test_lean_path.py": "the lean path's hand SQL (annotation/hotpath.py)",
    "tests/annotation/test_import.py": "the imports' bulk writers (annotation/bulk.py)",
    "tests/annotation/test_import_annotations.py": "the annotation imports' bulk writers",
    "tests/annotation/test_item_browser.py": "metadata strata read as text (curation/browse.py)",
    "tests/studies/test_sampling.py": "metadata strata in samples (studies/sampling.py)",
    "tests/studies/test_active_samples.py": "quality-control metadata (studies/active.py)",
    "tests/studies/test_quality.py": "JSON lookups on item metadata (studies/quality.py)",
    "tests/studies/test_plans.py": "plans and the pool under row locks (studies/plans.py, pool.py)",
    "tests/curation/test_exports.py": "the exports' queries (curation/services.py)",
    "tests/judges/test_run_management.py": "judge runs limited to a metadata stratum",
    "tests/demo/test_demo_study.py": "JSON lookups while seeding (demo/studies.py)",
    "tests/test_migrations.py": "migrations replayed from old releases",
}


def embedded_pass_keeps(item) -> bool:
    """The rule of the embedded (SQLite) pass, which exists to catch SQL that only one database
    refuses (raw SQL, JSON querying, locking, migrations, bulk writers): it runs a test that
    touches the database and needs no server, unless the test is slow; a slow test whose SQL
    differs between the databases (migrations) is marked ``sqlite`` and runs too. Everything
    left out ran in the first pass; the summary counts it as deselected. A slow test left out
    reaches the database through the same code as fast tests that run here (pages, imports,
    exports, judge runs); its own cost is a browser, a model or a compiler."""
    needs_server = set(getattr(item, "fixturenames", ())) & NEEDS_SERVERS_FIXTURES or any(
        item.get_closest_marker(m) for m in NEEDS_SERVERS_MARKERS
    )
    if needs_server or not uses_database(item):
        return False
    return bool(item.get_closest_marker("sqlite")) or not is_slow(item)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """(pytest-xdist, -n) xdist's "load" scheduling, except that the tests of a class run on one
    worker, and the demo classes (``shared_demo``, named ``*Demo``) all on one worker one after
    another, on one seed of the demo: spread over both workers, each class seeded it on each.
    (xdist's own "loadgroup" cannot do it under pytest 9.2: it renames each test through an
    attribute pytest no longer reads.)"""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ClassTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            parts = nodeid.split("::")  # file::Class::test[...] -> file::Class; else the test alone
            if len(parts) <= 2:
                return nodeid
            if parts[1].endswith(DEMO_CLASS_SUFFIX):  # every demo class on one worker, on one seed
                return "the shared demo"
            return "::".join(parts[:2])

    return ClassTogether(config, log)


def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` what starts real processes (a Celery worker, Chromium, a live server), runs a
    torch model, a TeX or gettext tool, generates many hypothesis examples or replays whole
    histories, so that `make test-fast` (``-m "not slow"``) is a quick inner loop. In the
    embedded pass, keep only what :func:`embedded_pass_keeps` (the rest deselected, counted in
    the summary)."""
    if services.embedded_pass():
        kept, dropped = [], []
        for item in items:
            (kept if embedded_pass_keeps(item) else dropped).append(item)
        root = config.rootpath
        collected = {item.path.relative_to(root).as_posix() for item in items} & set(DIALECT_TEST_FILES)
        lost = collected - {item.path.relative_to(root).as_posix() for item in kept}
        if lost:
            raise pytest.UsageError(
                "the embedded (SQLite) pass would run no test of: "
                + "; ".join(f"{f} ({DIALECT_TEST_FILES[f]})" for f in sorted(lost))
                + ". Keep a test there that touches the database and is not slow, or mark it sqlite"
                " (tests/conftest.py, embedded_pass_keeps)."
            )
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    for item in items:
        if is_slow(item) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
    # Slow tests first (a stable sort: each group keeps the files' order): pytest-xdist hands the
    # first tests out in turn to every worker, so the long ones (up to two minutes each) run side
    # by side from the start and the many short ones fill in after, instead of one long test
    # (the API fuzz pass, the migrations, at the end of the alphabet) keeping a worker busy
    # while the others have finished.
    items.sort(key=lambda item: not item.get_closest_marker("slow"))
    # The demo classes one after another, first (the longest block: a seed, then about a minute
    # of tests), so that they share one seed (shared_demo) in a run without xdist as well
    for item in items:
        if _uses_shared_demo(item) and not (item.cls is not None and item.cls.__name__.endswith(DEMO_CLASS_SUFFIX)):
            raise pytest.UsageError(
                f"{item.nodeid} uses shared_demo outside a test class named *{DEMO_CLASS_SUFFIX}"
                " (tests/conftest.py: the scheduler keeps those classes together on one seed)"
            )
    items.sort(key=lambda item: not _uses_shared_demo(item))


def pytest_report_header(config):
    if services.embedded_pass():
        return (
            "embedded pass: SQLite, no Redis (as make run); only tests that touch the database, need no server and"
            " are not slow (or are marked sqlite) run here; the rest ran in the first pass (tests/conftest.py)"
        )
    return None


# ------------------------------------------------------------------------- session guard
def pytest_configure(config):
    if services.services_required():
        problems = services.services_problems()
        if problems:
            raise pytest.UsageError(
                "CI / HV_TEST_SERVICES=1 requires the real services (no SQLite fallback outside the embedded pass):\n  - "
                + "\n  - ".join(problems)
                + "\nRun the suite with `make test` (scripts/test starts PostgreSQL and Redis)."
            )


# ----------------------------------------------------------------------- the demo, seeded once
class _SharedDemo:
    """The demo seeded in a transaction left open while the demo classes run one after another
    (``shared_demo``): opened by the first test that needs it, rolled back after the last test
    of a run of such tests (``pytest_runtest_teardown`` below), so the tests after them see the
    database as before."""

    def __init__(self) -> None:
        self.outer = None
        self.overrides = None
        self.media: Path | None = None

    @property
    def open(self) -> bool:
        return self.outer is not None

    def seed(self, django_db_blocker, tmp_path_factory) -> Path:
        import io

        from django.core.management import call_command
        from django.db import transaction
        from django.test import override_settings

        self.media = tmp_path_factory.mktemp("demo-media")
        self.overrides = override_settings(
            MEDIA_ROOT=self.media, PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]
        )
        self.overrides.enable()
        self.outer = transaction.atomic()
        with django_db_blocker.unblock():
            self.outer.__enter__()
            try:
                call_command("seed_demo", stdout=io.StringIO())
            except BaseException:
                self.close(django_db_blocker)
                raise
        return self.media

    def close(self, django_db_blocker) -> None:
        from django.db import transaction

        outer, overrides = self.outer, self.overrides
        self.outer = self.overrides = self.media = None
        try:
            if outer is not None:
                with django_db_blocker.unblock():
                    transaction.set_rollback(True)
                    outer.__exit__(None, None, None)
        finally:
            if overrides is not None:
                overrides.disable()


_shared_demo = _SharedDemo()

#: a test class on the shared demo is named so (checked at collection): the xdist scheduler
#: below runs every such class on one worker, one after another, on one seed
DEMO_CLASS_SUFFIX = "Demo"


@pytest.fixture(scope="class")
def shared_demo(django_db_setup, django_db_blocker, tmp_path_factory):
    """The whole demo (``seed_demo``, every preset, with its simulated studies) seeded once for
    the demo test classes that run one after another instead of once per test: a full seed is
    the dearest setup of the suite. It is written inside a transaction opened here and rolled
    back after the last test of that run of classes; each test runs, as usual, in its own
    savepoint inside it (pytest-django's ``db``), so what a test writes is undone after it and
    the next test sees the demo exactly as seeded. Use it from tests of a class whose name ends
    with ``Demo``, through a function-scoped fixture that also asks for ``db`` and reads the
    projects afresh (no Python object shared between tests). Not for ``transaction=True`` tests
    (they would flush the shared rows); only those classes' tests see the demo, so tests that
    count rows of an empty database stay outside them. MEDIA_ROOT is a folder of its own;
    passwords are hashed with MD5 (fast demo logins)."""
    if not _shared_demo.open:
        _shared_demo.seed(django_db_blocker, tmp_path_factory)
    return _shared_demo.media


def _uses_shared_demo(item) -> bool:
    return item is not None and "shared_demo" in getattr(item, "fixturenames", ())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield  # the test's own fixtures (its savepoint) are gone now
    if _shared_demo.open and not _uses_shared_demo(nextitem):
        from pytest_django.plugin import blocking_manager_key  # what the django_db_blocker fixture returns

        _shared_demo.close(item.config.stash[blocking_manager_key])


def pytest_sessionfinish(session):
    if _shared_demo.open:  # a run that stopped inside the demo classes (-x, an interrupt)
        from pytest_django.plugin import blocking_manager_key

        _shared_demo.close(session.config.stash[blocking_manager_key])


# ---------------------------------------------------------------------------------- redis
@pytest.fixture(scope="session")
def redis_url() -> str:
    url = os.environ.get("REDIS_URL")
    if not url:
        _need_service("REDIS_URL is not set")
    return url


# --------------------------------------------------------------------------------- celery
@pytest.fixture(scope="session")
def _celery_worker_session(redis_url, django_db_setup, django_db_blocker, tmp_path_factory):
    """One worker per pytest process (per xdist worker: own Redis DB, own test database)."""
    from django.db import connections

    settings_dict = connections["default"].settings_dict
    if not settings_dict["ENGINE"].endswith("postgresql"):
        _need_service(
            f"celery_worker_process needs the PostgreSQL test database (DATABASE_URL is {settings_dict['ENGINE']})"
        )
    broker = services.redis_url_for_db(redis_url, services.xdist_index())
    worker = services.CeleryWorker(
        broker_url=broker,
        database_url=services.database_url_from_settings(settings_dict),
        log_path=tmp_path_factory.mktemp("celery") / "worker.log",
    )
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()


@pytest.fixture
def celery_worker_process(_celery_worker_session):
    """The running worker (services.CeleryWorker: .hostname, .broker_url, .log_text()).
    During the test, config.celery.app publishes to the same Redis broker and reads
    results from Redis, so `task.delay(...).get(timeout=...)` works when the task does
    not ignore results (`apply_async(..., ignore_result=False)`)."""
    from config.celery import app

    worker = _celery_worker_session
    if not worker.alive:
        pytest.fail(f"celery worker died; log:\n{worker.log_tail()}", pytrace=False)
    with services.celery_app_on_broker(app, worker.broker_url, worker.result_backend):
        yield worker
    if not worker.alive:
        pytest.fail(f"celery worker died during the test; log:\n{worker.log_tail()}", pytrace=False)


# -------------------------------------------------------------------------------- browser
@pytest.fixture(scope="session")
def browser():
    executable = os.environ.get("PLAYWRIGHT_CHROMIUM_EXECUTABLE", "/usr/bin/chromium")
    if not os.path.exists(executable):
        _need_service(f"Chromium not found at {executable} (PLAYWRIGHT_CHROMIUM_EXECUTABLE)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need_service("playwright is not installed")
    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
    except BaseException:
        pw.stop()
        raise
    try:
        yield b
    finally:
        b.close()
        pw.stop()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    context.set_default_timeout(15_000)
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


# ------------------------------------------------------------------------- embedded stack
@pytest.fixture(scope="session")
def embedded_sqlite_template(tmp_path_factory):
    """A migrated SQLite file (WAL, as `make run` has it), made once per session: the tests of
    locks between connections and of a worker's memory copy it (tests/embedded.py)."""
    from tests import embedded

    folder = tmp_path_factory.mktemp("embedded-template")
    db = folder / "db.sqlite3"
    embedded.migrate(db, folder)
    return db
