"""The pool under concurrency, against real PostgreSQL: many threads (each its own database
connection) claim and submit at once while another thread keeps expiring leases, so claims,
reclaims, late submissions and skips race each other. Afterwards: no item has more than k
submissions, no assignment was served to two annotators, nothing that was acknowledged as
submitted was lost, and draining the pool leaves every item with exactly k."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from annotate import annotating
from annotation import projects
from annotation.models import Annotation, Assignment
from core.errors import DomainError
from studies import next_item, plans, pool, sampling
from studies.models import PoolSlot
from tests.annotation.factories import make_user
from tests.concurrency import in_threads, require_postgres
from tests.studies.design_helpers import strata_project

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = {"human_written": "right"}


@pytest.fixture(autouse=True)
def postgres_only():
    require_postgres()


def _raters(n: int, nationality=lambda i: None):
    out = []
    for i in range(n):
        user = make_user(f"crowd{i:03d}")
        r = projects.rater_for_user(user)
        nat = nationality(i)
        if nat:
            r.attributes = {"nationality": nat}
            r.save(update_fields=["attributes"])
        out.append(r)
    return out


def test_hundreds_of_annotators_claiming_and_submitting_at_once(researcher):
    k = 3
    raters = _raters(200)
    project = strata_project(researcher, {("China", "gpt"): 60, ("Germany", "gemini"): 60}, k=k)
    for r in raters:
        projects.add_member(project=project, user=r.user, role="annotator")
    sample = sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=60, seed=2)
    plan = plans.create_plan(sample=sample, mode="pooled", k=k, lease_seconds=600)

    served: dict[int, int] = {}  # assignment id -> rater id
    served_twice: list[tuple[int, int, int]] = []
    acknowledged: list[int] = []
    refused: Counter = Counter()
    lock = threading.Lock()
    stop = threading.Event()
    n_threads = 48

    def worker(idx):
        rng = random.Random(idx)
        mine = raters[idx::n_threads]
        active = list(mine)
        while active:
            r = rng.choice(active)
            a = next_item.next_assignment(rater=r, project=project)
            if a is None:
                active.remove(r)
                continue
            with lock:
                if served.get(a.id, r.id) != r.id:
                    served_twice.append((a.id, served[a.id], r.id))
                served[a.id] = r.id
            roll = rng.random()
            if roll < 0.1:
                continue  # abandon: the hold expires (the chaos thread) and returns to the pool
            if roll < 0.15:
                try:
                    annotating.skip_assignment(assignment_id=a.id, rater=r, reason="cannot judge")
                except DomainError:
                    refused["skip"] += 1
                continue
            try:
                annotating.submit_annotation(assignment_id=a.id, rater=r, answers=ANSWER)
            except DomainError as exc:
                refused[exc.message[:30]] += 1  # e.g. its lease was reclaimed a moment ago
            else:
                with lock:
                    acknowledged.append(a.id)

    def chaos():
        rng = random.Random(99)
        while not stop.is_set():
            ids = list(PoolSlot.objects.filter(plan=plan, state="leased").values_list("id", flat=True)[:200])
            if ids:
                PoolSlot.objects.filter(pk__in=rng.sample(ids, max(1, len(ids) // 4))).update(
                    lease_expires_at=timezone.now() - timedelta(seconds=1)
                )
            time.sleep(0.02)
        connections.close_all()

    chaos_thread = threading.Thread(target=chaos)
    chaos_thread.start()
    try:
        errors = in_threads(n_threads, worker, start_together=True)
    finally:
        stop.set()
        chaos_thread.join(timeout=30)
    assert not errors, errors[:3]
    assert not served_twice

    # Nothing acknowledged is lost, and no item exceeds k.
    assert len(acknowledged) == len(set(acknowledged))
    statuses = dict(Assignment.objects.filter(pk__in=acknowledged).values_list("id", "status"))
    assert set(statuses.values()) == {"submitted"} and len(statuses) == len(acknowledged)
    assert Annotation.objects.filter(assignment_id__in=acknowledged).count() == len(acknowledged)
    per_item = Counter(Annotation.objects.filter(assignment__plan=plan).values_list("item_id", flat=True))
    assert max(per_item.values()) <= k
    # Every submitted slot is backed by exactly one submitted assignment and vice versa.
    submitted_slots = Counter(PoolSlot.objects.filter(plan=plan, state="submitted").values_list("item_id", flat=True))
    assert submitted_slots == per_item
    # The unique (item, rater) rule held: nobody judged an item twice.
    pairs = Counter(Assignment.objects.filter(plan=plan).values_list("item_id", "rater_id"))
    assert max(pairs.values()) == 1

    # Drain: expire what is still held, then let everyone finish; every item ends with exactly k.
    PoolSlot.objects.filter(plan=plan, state="leased").update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    drained = defaultdict(int)

    def drainer(idx):
        for r in raters[idx::8]:
            while (a := next_item.next_assignment(rater=r, project=project)) is not None:
                annotating.submit_annotation(assignment_id=a.id, rater=r, answers=ANSWER)
                drained[idx] += 1

    assert not in_threads(8, drainer, start_together=True)
    per_item = Counter(Annotation.objects.filter(assignment__plan=plan).values_list("item_id", flat=True))
    assert len(per_item) == 120 and set(per_item.values()) == {k}
    assert not PoolSlot.objects.filter(plan=plan).exclude(state="submitted").exists()


def test_one_annotator_in_many_tabs_never_gets_the_same_item_twice(researcher):
    raters = _raters(1)
    project = strata_project(researcher, {("China", "gpt"): 30}, k=3)
    projects.add_member(project=project, user=raters[0].user, role="annotator")
    sample = sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=30, seed=2)
    plans.create_plan(sample=sample, mode="pooled", k=3)
    r = raters[0]
    got: list[int] = []
    lock = threading.Lock()

    def tab(idx):
        for _ in range(10):
            a = pool.claim_from_pool(rater=r, project=project)  # bypass the queue: raw claims at once
            if a is not None:
                with lock:
                    got.append(a.item_id)

    assert not in_threads(12, tab, start_together=True)
    assert len(got) == len(set(got)) == 30


def test_eligibility_holds_under_concurrency(researcher):
    raters = _raters(60, nationality=lambda i: ("China", "Germany", "France")[i % 3])
    project = strata_project(researcher, {("China", "gpt"): 20, ("Germany", "gpt"): 20}, k=2)
    for r in raters:
        projects.add_member(project=project, user=r.user, role="annotator")
    sample = sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=20, seed=2)
    plan = plans.create_plan(
        sample=sample, mode="pooled", k=2, eligibility=[{"attribute": "nationality", "item_key": "country"}]
    )

    def worker(idx):
        for r in raters[idx::20]:
            while (a := next_item.next_assignment(rater=r, project=project)) is not None:
                annotating.submit_annotation(assignment_id=a.id, rater=r, answers=ANSWER)

    assert not in_threads(20, worker, start_together=True)
    rows = list(Assignment.objects.filter(plan=plan).values_list("item__country", "rater__attributes__nationality"))
    assert len(rows) == 80 and all(c == n for c, n in rows)
