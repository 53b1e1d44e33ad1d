"""The lean annotate path (issue 15: ``annotation.hotpath``, ``annotate.hot_api``, the annotate
page) answers exactly as the ordinary path does (``HV_LEAN_API`` off: the DRF views, the page
with its login check), refuses what that refuses, never outlives a session Django would no
longer accept, counts API rates once, and holds under concurrent submits."""

from __future__ import annotations

import base64
import json
import re
import threading
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection, connections
from django.test import Client
from django.utils import timezone

from annotation import importing, projects
from annotation.models import Annotation, Assignment
from studies import plans, sampling
from studies.models import PoolSlot
from tests import services as test_services

from .factories import jsonl, make_project, make_user, valueground_records

pytestmark = pytest.mark.django_db

VG = {"q1": 2, "q2": 1, "q3": 0, "q4": 1}


def vg_project(researcher, annotators, tmp_path, name: str, n: int = 3):
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators, k=2, name=name)
    report = importing.import_items(
        project=project, data=jsonl(valueground_records(tmp_path, n=n)), data_format="jsonl", images=tmp_path
    )
    assert report.ok
    return project


def session_client(user, *, csrf: bool = True) -> Client:
    """A browser: logged in, with a CSRF cookie it echoes in X-CSRFToken (as the load generator)."""
    c = Client(enforce_csrf_checks=True)
    c.force_login(user)
    if csrf:
        c.cookies["csrftoken"] = "t" * 32
        c.defaults["HTTP_X_CSRFTOKEN"] = "t" * 32
    return c


def queue(project, user) -> list[int]:
    return list(
        Assignment.objects.filter(project=project, rater__user=user)
        .order_by("position", "id")
        .values_list("id", flat=True)
    )


def post_json(c: Client, url: str, body, **extra):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return c.post(url, data, content_type="application/json", **extra)


def api_script(c: Client, project, user, other_assignment: int) -> list[tuple]:
    """The requests of an annotating client, and some it gets wrong; each answer as (status,
    the headers a client reads, the body with ids replaced by their place in the queue)."""
    ids = queue(project, user)
    place = {aid: f"#{i}" for i, aid in enumerate(ids)}

    def seen(r) -> tuple:
        try:
            body = r.json()
        except ValueError:
            body = r.content.decode()
        if isinstance(body, dict):
            body = {k: place.get(v, v) if k in ("id", "next") else v for k, v in body.items()}
            if body.get("project") == project.id:
                body["project"] = "#project"
        headers = {h: r.headers.get(h) for h in ("Content-Type", "Allow", "Vary")}
        return r.status_code, headers, body

    first, second = ids[0], ids[1]
    url = f"/api/assignments/{first}/"
    out = [
        seen(c.get(url)),  # opens it
        seen(c.get(url)),
        seen(post_json(c, url + "submit/", {"answers": VG, "duration_ms": 4200})),  # -> next
        seen(c.get(url)),  # submitted, with the answer
        seen(post_json(c, url + "submit/", {"answers": VG})),  # twice: refused
        seen(post_json(c, f"/api/assignments/{second}/submit/", {"answers": {"q1": 2}})),  # missing answers
        seen(post_json(c, f"/api/assignments/{second}/submit/", {"answers": {**VG, "zz": 1}})),  # unknown question
        seen(post_json(c, f"/api/assignments/{second}/submit/", {"answers": VG, "duration_ms": "soon"})),
        seen(post_json(c, f"/api/assignments/{second}/submit/", {"answers": VG, "duration_ms": -1})),
        seen(post_json(c, f"/api/assignments/{second}/submit/", {"answers": [1, 2]})),
        seen(post_json(c, f"/api/assignments/{second}/submit/", "{not json")),
        seen(post_json(c, f"/api/assignments/{second}/submit/", {"answers": {**VG, "feedback": "a\u0000b"}})),
        seen(c.post(f"/api/assignments/{second}/submit/", {"answers": "x"})),  # a form, not JSON: 415
        seen(c.get(f"/api/assignments/{other_assignment}/")),  # someone else's: 404
        seen(post_json(c, f"/api/assignments/{other_assignment}/submit/", {"answers": VG})),
        seen(c.get(f"/api/assignments/{second}/", HTTP_ACCEPT="application/xml")),  # 406
        seen(c.get(f"/api/assignments/{second}/?format=json")),
        seen(post_json(c, f"/api/assignments/{second}/submit/", {"answers": VG, "duration_ms": 10**9})),
    ]
    no_csrf = session_client(user, csrf=False)
    out.append(seen(post_json(no_csrf, f"/api/assignments/{ids[2]}/submit/", {"answers": VG})))
    out.append(seen(Client().get(f"/api/assignments/{ids[2]}/")))  # not logged in
    return out


def test_the_api_answers_the_same_on_the_lean_path_and_through_drf(researcher, annotators, tmp_path, settings):
    runs = {}
    for lean in (True, False):
        settings.HV_LEAN_API = lean
        folder = tmp_path / str(lean)
        folder.mkdir()
        project = vg_project(researcher, annotators, folder, name=f"lean={lean}")
        other = queue(project, annotators[1])[0]
        runs[lean] = api_script(session_client(annotators[0]), project, annotators[0], other)
        stored = Annotation.objects.filter(assignment__project=project).order_by("assignment__position")
        runs[lean].append([(a.answers, a.derived, a.duration_ms, a.revision, a.locale) for a in stored])
    for lean_answer, drf_answer in zip(runs[True], runs[False], strict=True):
        assert lean_answer == drf_answer
    assert runs[True][2][0] == 201 and runs[True][2][2]["next"] == "#1"


def test_the_lean_path_takes_the_loop_and_leaves_the_rest_to_drf(researcher, annotators, tmp_path, monkeypatch):
    """The common requests are served without reaching DRF; the unusual ones reach it."""
    from rest_framework.views import APIView

    scripted = make_user("scripted")
    project = vg_project(researcher, [*annotators, scripted], tmp_path, name="p")
    ids = queue(project, annotators[0])
    reached = []
    dispatch = APIView.dispatch

    def counting(self, request, *args, **kwargs):
        reached.append(request.path)
        return dispatch(self, request, *args, **kwargs)

    monkeypatch.setattr(APIView, "dispatch", counting)
    c = session_client(annotators[0])
    assert c.get(f"/api/assignments/{ids[0]}/").status_code == 200
    assert post_json(c, f"/api/assignments/{ids[0]}/submit/", {"answers": VG}).status_code == 201
    assert reached == []
    assert post_json(c, f"/api/assignments/{ids[0]}/submit/", {"answers": VG}).status_code == 400
    basic = Client()
    basic.defaults["HTTP_AUTHORIZATION"] = "Basic " + base64.b64encode(b"scripted:pw-scripted").decode()
    assert basic.get(f"/api/assignments/{queue(project, scripted)[0]}/").status_code == 200
    assert len(reached) == 2


def test_a_session_stops_working_on_the_lean_path_when_django_would_refuse_it(researcher, annotators, tmp_path):
    project = vg_project(researcher, annotators, tmp_path, name="p")
    ann = annotators[0]
    ids = queue(project, ann)
    c = session_client(ann)
    assert c.get(f"/api/assignments/{ids[0]}/").status_code == 200  # verified once in this process
    assert c.get(f"/a/{ids[0]}/").status_code == 200
    ann.set_password("a new one")
    ann.save()  # the session's hash no longer matches: Django logs it out
    assert c.get(f"/api/assignments/{ids[0]}/").status_code == 403
    assert post_json(c, f"/api/assignments/{ids[0]}/submit/", {"answers": VG}).status_code == 403
    assert not Annotation.objects.exists()
    c = session_client(ann)
    assert c.get(f"/a/{ids[0]}/").status_code == 200
    ann.is_active = False
    ann.save()
    r = c.get(f"/a/{ids[0]}/")
    assert r.status_code == 302 and r["Location"].startswith("/login/")
    r = c.post(
        f"/a/{ids[0]}/", {**{k: str(v) for k, v in VG.items()}, "mode": "submit", "csrfmiddlewaretoken": "t" * 32}
    )
    assert r.status_code == 302 and r["Location"].startswith("/login/")
    assert not Annotation.objects.exists()


def test_api_rates_are_counted_once_when_the_lean_path_hands_over(researcher, annotators, tmp_path, monkeypatch):
    from rest_framework.throttling import SimpleRateThrottle

    project = vg_project(researcher, annotators, tmp_path, name="p")
    ids = queue(project, annotators[0])
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"user": "4/min", "anon": None})
    cache.clear()
    c = session_client(annotators[0])
    assert c.get(f"/api/assignments/{ids[0]}/").status_code == 200  # 1 (lean)
    assert post_json(c, f"/api/assignments/{ids[0]}/submit/", {"answers": {}}).status_code == 400  # 2 (handed over)
    assert c.get(f"/api/assignments/{ids[0]}/?format=json").status_code == 200  # 3 (DRF)
    assert post_json(c, f"/api/assignments/{ids[0]}/submit/", {"answers": VG}).status_code == 201  # 4 (lean)
    assert c.get(f"/api/assignments/{ids[1]}/").status_code == 429  # 5: over the rate
    assert c.get(f"/api/assignments/{ids[1]}/?format=json").status_code == 429


def normalise_page(html: str) -> str:
    """A page with what differs between two renders taken out: CSRF tokens (new each render)."""
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', 'name="csrfmiddlewaretoken" value=""', html)
    return re.sub(r'"X-CSRFToken": "[^"]+"', '"X-CSRFToken": ""', html)


def test_the_annotate_page_is_the_same_on_the_lean_path(researcher, annotators, tmp_path, settings):
    """GET, a refused POST (400 page with the answers and errors), a stored POST (302 to the
    next item), the page of a submitted item, an edit: the same on both paths."""
    pages = {}
    for lean in (True, False):
        settings.HV_LEAN_API = lean
        folder = tmp_path / str(lean)
        folder.mkdir()
        project = vg_project(researcher, annotators, folder, name="same name")
        ann = annotators[0]
        ids = queue(project, ann)
        c = session_client(ann)
        form = {**{k: str(v) for k, v in VG.items()}, "mode": "submit", "csrfmiddlewaretoken": "t" * 32}
        seen = []
        for method, path, data in [
            ("get", f"/a/{ids[0]}/", None),
            ("post", f"/a/{ids[0]}/", {**form, "q4": ""}),
            ("post", f"/a/{ids[0]}/", {**form, "duration_ms": "3100"}),
            ("get", f"/a/{ids[0]}/", None),
            ("post", f"/a/{ids[0]}/", {**form, "mode": "edit", "q1": "0"}),
            ("post", f"/a/{ids[0]}/", form),  # twice: refused
            ("get", f"/a/{queue(project, annotators[1])[0]}/", None),  # someone else's
        ]:
            r = getattr(c, method)(path, data) if data else getattr(c, method)(path)
            where = r.get("Location", "")
            for i, aid in enumerate(ids):
                where = where.replace(f"/a/{aid}/", f"/a/#{i}/")
            html = normalise_page(r.content.decode()).replace(f"/a/{ids[0]}/", "/a/#0/")
            seen.append((r.status_code, where, html.replace(f"/projects/{project.id}/", "/projects/#/")))
        stored = Annotation.objects.get(assignment_id=ids[0])
        seen.append((stored.answers, stored.derived, stored.duration_ms, stored.revision))
        pages[lean] = seen
    for lean_page, ordinary_page in zip(pages[True], pages[False], strict=True):
        assert lean_page == ordinary_page
    assert [p[0] for p in pages[True][:7]] == [200, 400, 302, 200, 302, 400, 404]


def pooled_project(researcher, annotators, tmp_path):
    project = vg_project(researcher, [], tmp_path, name="pooled", n=4)
    for a in annotators:
        projects.add_member(project=project, user=a, role="annotator")
    Assignment.objects.filter(project=project).delete()
    sample = sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=4, seed=1)
    plan = plans.create_plan(sample=sample, mode="pooled", k=1, lease_seconds=60)
    return project, plan


def test_pooled_items_on_the_lean_path_renew_their_hold_and_claim_the_next(researcher, annotators, tmp_path):
    project, plan = pooled_project(researcher, annotators, tmp_path)
    c = session_client(annotators[0])
    first = c.get(f"/api/projects/{project.id}/next/").json()["id"]
    a = Assignment.objects.get(pk=first)
    PoolSlot.objects.filter(assignment=a).update(lease_expires_at=timezone.now() + timedelta(seconds=5))
    detail = c.get(f"/api/assignments/{first}/")  # lean: opening renews the hold
    assert detail.status_code == 200 and detail.json()["status"] == "in_progress"
    slot = PoolSlot.objects.get(assignment=a)
    assert slot.lease_expires_at > timezone.now() + timedelta(seconds=50)
    r = post_json(c, f"/api/assignments/{first}/submit/", {"answers": VG})
    assert r.status_code == 201
    nxt = r.json()["next"]  # the queue is empty: claimed from the pool
    assert nxt and Assignment.objects.get(pk=nxt).plan_id == plan.id
    slot.refresh_from_db()
    assert slot.state == "submitted" and Assignment.objects.get(pk=first).status == "submitted"
    # an expired hold that went back to the pool is refused, and nothing is stored
    PoolSlot.objects.filter(assignment_id=nxt).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    from studies import pool

    pool.expire_leases(project=project)
    r = post_json(c, f"/api/assignments/{nxt}/submit/", {"answers": VG})
    assert r.status_code == 400 and "expired" in r.json()["detail"]
    assert not Annotation.objects.filter(assignment_id=nxt).exists()


@pytest.fixture
def postgres_only():
    if connection.vendor != "postgresql":
        if test_services.services_required():
            pytest.fail("the concurrency tests need PostgreSQL")
        pytest.skip("the concurrency tests need PostgreSQL (run scripts/test)")


@pytest.mark.django_db(transaction=True)
def test_concurrent_lean_submits_store_each_answer_once(researcher, tmp_path, postgres_only):
    """Eight annotators, each in three tabs at once, work through their queues over the lean
    API; every tab also re-sends its last answer. Each assignment is stored exactly once, every
    201 is in the database, every item has its k answers and no more."""
    users = [make_user(f"tab{i}") for i in range(8)]
    project = make_project("valueground.pair_quality", owner=researcher, annotators=users, k=2, name="tabs")
    importing.import_items(
        project=project, data=jsonl(valueground_records(tmp_path, n=12)), data_format="jsonl", images=tmp_path
    )
    created: list[int] = []
    refused: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    barrier = threading.Barrier(24)

    def tab(idx: int) -> None:
        try:
            user = users[idx % 8]
            c = session_client(user)
            barrier.wait()
            for aid in queue(project, user):
                c.get(f"/api/assignments/{aid}/")
                for _ in range(2):
                    r = post_json(c, f"/api/assignments/{aid}/submit/", {"answers": VG})
                    with lock:
                        (created if r.status_code == 201 else refused).append(aid)
                    assert r.status_code in (201, 400), r.content
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=tab, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors[:3]
    assert len(created) == len(set(created)) == Assignment.objects.filter(project=project).count() == 24
    stored = list(Annotation.objects.filter(assignment__project=project).values_list("assignment_id", "item_id"))
    assert sorted(a for a, _ in stored) == sorted(created)
    per_item = {}
    for _, item in stored:
        per_item[item] = per_item.get(item, 0) + 1
    assert set(per_item.values()) == {2}
    assert set(Assignment.objects.filter(project=project).values_list("status", flat=True)) == {"submitted"}
