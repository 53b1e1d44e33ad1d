"""The lean annotate path (issue 15: ``annotation.hotpath``, ``annotate.hot_api``, the annotate
page) answers exactly as the ordinary path does (``HV_LEAN_API`` off: the DRF views, the page
with its login check), refuses what that refuses, never outlives a session Django would no
longer accept, counts API rates once, and holds under concurrent submits. Scripted sessions
(issue 21) take the same course on both paths where the next item is decided differently:
quality control with attention and gold items up to a pause, repeats, a crowd quota, a pooled
claim after the own queue, a pre-assigned plan shared by two annotators."""

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
from tests.annotation.factories import jsonl, make_project, make_user, valueground_records
from tests.studies.design_helpers import strata_records

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


# ------------------------------------------------------------------- differential sessions
# Issue 21: where the two paths branch (quality control, repeats, a crowd quota, a pooled claim
# after the own queue, a plan's slot path) the same scripted session runs on two fresh identical
# projects, the lean path on and off, and everything an annotator or a researcher could observe
# is compared. Ids differ between the two projects, so every assignment id is written as
# "<annotator>/<item's external id>/<purpose>" (with "#n" for a second one of the same kind).

QC_RECORDS = [
    {
        "id": f"{kind}-{i}",
        "human_utterance": f"{kind} {i}",
        "model_utterance": "x",
        "country": "China",
        "generator": "gpt",
        "meta": {"qc": kind, "expected.human_written": expected},
    }
    for kind, expected, n in (("attention", "left", 1), ("gold", "right", 2))
    for i in range(n)
]


def turing_project(owner, annotators, *, n: int, k: int = 1, plans_only: bool = False, qc=None, extra=()):
    """A Turing-pair project (``design_helpers.strata_records``) with a fixed pair order: the
    presentation of a default row, a pool claim or an injected QC item is otherwise drawn from
    an unseeded generator, and would differ between the two runs for no reason of the paths'."""
    project = make_project("cqbench.turing", owner=owner, k=k, name="differential")
    project.randomise_pair_order = False
    if plans_only:
        project.options = {**project.options, "assignment": "plans"}
    if qc:
        project.options = {**project.options, "qc": qc}
    project.save(update_fields=["randomise_pair_order", "options"])
    for user in annotators:  # members first: the import hands out every item but the QC ones
        projects.add_member(project=project, user=user, role="annotator")
    records = strata_records({("China", "gpt"): n}) + list(extra)
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl")
    assert report.ok, report.errors
    return project


class Recorder:
    """Requests as an annotator's browser or API client makes them, each answer kept with the
    ids in it as raw numbers (``("A", id)``), named after the run (:meth:`named`)."""

    def __init__(self, project, study=None) -> None:
        self.project, self.study, self.log = project, study, []

    def client(self, user=None) -> Client:
        if user is not None:
            return session_client(user)
        c = Client(enforce_csrf_checks=True)  # a crowd participant logs in through the study link
        c.cookies["csrftoken"] = "t" * 32
        c.defaults["HTTP_X_CSRFTOKEN"] = "t" * 32
        return c

    def text(self, value: str) -> str:
        value = value.replace(f"/projects/{self.project.id}/", "/projects/#/")
        if self.study is not None:
            value = value.replace(self.study.token, "#token")
        return re.sub(r"/a/([0-9]+)/", lambda m: f"/a/{{{m.group(1)}}}/", normalise_page(value))

    def seen(self, who: str, what: str, r) -> None:
        where = self.text(r.get("Location", ""))
        if r.get("Content-Type", "").startswith("application/json"):
            body = dict(r.json())  # a copy: the test client keeps the parsed body for the script
            for key in ("id", "next"):
                if isinstance(body.get(key), int):
                    body[key] = ("A", body[key])
            if body.get("project") == self.project.id:
                body["project"] = "#project"
        else:
            body = self.text(r.content.decode())
        chain = [(self.text(url), code) for url, code in getattr(r, "redirect_chain", [])]
        self.log.append((who, self.text(what), r.status_code, where, chain, body))

    def named(self, label) -> list:
        """The log with every assignment id replaced by its label."""

        def name(value):
            if isinstance(value, tuple) and len(value) == 2 and value[0] == "A":
                return label[value[1]]
            if isinstance(value, str):
                return re.sub(r"/a/\{([0-9]+)\}/", lambda m: f"/a/{label[int(m.group(1))]}/", value)
            if isinstance(value, dict):
                return {k: name(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(name(v) for v in value)
            return value

        return [name(entry) for entry in self.log]


def labels(project) -> dict[int, str]:
    """Each assignment of the project by annotator, item and purpose, in the order they were made."""
    out: dict[int, str] = {}
    counts: dict[str, int] = {}
    rows = Assignment.objects.filter(project=project).order_by("id")
    for aid, user, ext, purpose in rows.values_list("id", "rater__name", "item__external_id", "purpose"):
        base = f"{user}/{ext}/{purpose}"
        counts[base] = counts.get(base, 0) + 1
        out[aid] = base if counts[base] == 1 else f"{base}#{counts[base]}"
    return out


def answer_policy():
    """What the scripted annotator answers: regular items by the parity of their number, a
    repeat the opposite of the first time, attention and gold items right the first time and
    wrong after that (so that scoring and pausing happen). The same on both runs."""
    seen: dict[str, int] = {}

    def answer(assignment_id: int) -> str:
        a = Assignment.objects.select_related("item").get(pk=assignment_id)
        expected = a.item.meta.get("expected.human_written")
        if expected is not None:
            seen[a.purpose] = seen.get(a.purpose, 0) + 1
            right = seen[a.purpose] == 1
            return expected if right else {"left": "right", "right": "left"}[expected]
        left = int(a.item.external_id.rsplit("-", 1)[1]) % 2 == 0
        if a.purpose == Assignment.Purpose.REPEAT:
            left = not left
        return "left" if left else "right"

    return answer


class Annotator:
    """One annotator's scripted session: one item per :meth:`step`, through the API and the
    page in turn (GET then submit), going where the answer says next (the API's ``next``, the
    page's redirect) until there is nothing next; then the end of the work (the API's next,
    the page's next item, followed to its last redirect)."""

    def __init__(self, rec: Recorder, name: str, c: Client, start: str, answer) -> None:
        self.rec, self.name, self.c, self.answer = rec, name, c, answer
        self.steps = 0
        r = c.get(start)
        rec.seen(name, f"GET {start}", r)
        found = re.match(r"^/a/([0-9]+)/$", r.get("Location", ""))
        self.current = int(found.group(1)) if found else None
        self.done = self.current is None

    def step(self) -> None:
        aid, rec, c = self.current, self.rec, self.c
        choice = self.answer(aid)
        if self.steps % 2 == 0:
            rec.seen(self.name, "api GET", c.get(f"/api/assignments/{aid}/"))
            r = post_json(c, f"/api/assignments/{aid}/submit/", {"answers": {"human_written": choice}})
            rec.seen(self.name, f"api submit {choice}", r)
            nxt = r.json().get("next") if r.status_code == 201 else None
        else:
            rec.seen(self.name, "page GET", c.get(f"/a/{aid}/"))
            form = {"human_written": choice, "mode": "submit", "csrfmiddlewaretoken": "t" * 32}
            r = c.post(f"/a/{aid}/", form)
            rec.seen(self.name, f"page submit {choice}", r)
            found = re.match(r"^/a/([0-9]+)/$", r.get("Location", ""))
            nxt = int(found.group(1)) if found else None
        self.steps += 1
        if nxt is None:  # the end, or a refusal (compared like any answer; the tests check the end state)
            self.finish()
        self.current = nxt

    def finish(self) -> None:
        pid = self.rec.project.id
        self.rec.seen(self.name, "api next", self.c.get(f"/api/projects/{pid}/next/"))
        self.rec.seen(self.name, "page next", self.c.get(f"/projects/{pid}/next/", follow=True))
        self.done = True


def run_sessions(rec: Recorder, annotators: list[Annotator], *, limit: int = 40) -> None:
    """The annotators' sessions, one item each in turn, until every queue is done."""
    for _ in range(limit):
        active = [a for a in annotators if not a.done]
        if not active:
            return
        for a in active:
            a.step()
    pytest.fail(f"the sessions did not end within {limit} rounds")


def after_the_end(rec: Recorder, who: Annotator, user) -> None:
    """What is still open in the annotator's queue once the session ended (a paused annotator,
    a participant past the quota): opened through the API and answered through the page."""
    left = queue_open(rec.project, user)
    if left is None:
        return
    rec.seen(who.name, "late api GET", who.c.get(f"/api/assignments/{left}/"))
    form = {"human_written": "left", "mode": "submit", "csrfmiddlewaretoken": "t" * 32}
    r = who.c.post(f"/a/{left}/", form)
    rec.seen(who.name, "late page submit left", r)
    if r.status_code == 302:
        rec.seen(who.name, "late page next", who.c.get(r["Location"], follow=True))


def queue_open(project, user) -> int | None:
    return (
        Assignment.objects.filter(project=project, rater__user=user, status__in=["assigned", "in_progress"])
        .order_by("position", "id")
        .values_list("id", flat=True)
        .first()
    )


def final_state(project, label) -> dict:
    """What the run left in the database: each assignment's status, purpose, QC result and plan,
    each answer, each pool slot, each annotator's pause, each crowd participant's completion."""
    from annotation.models import Membership
    from studies.models import CrowdParticipant

    assignments = sorted(
        (label[a.id], a.status, a.purpose, a.qc_passed, a.plan_id is not None, a.position)
        for a in Assignment.objects.filter(project=project)
    )
    answers = sorted(
        (label[a.assignment_id], a.answers, a.derived, a.revision)
        for a in Annotation.objects.filter(assignment__project=project)
    )
    slots = sorted(
        (s.item.external_id, s.state, s.rater.name if s.rater else None, label.get(s.assignment_id))
        for s in PoolSlot.objects.filter(plan__project=project).select_related("item", "rater")
    )
    members = sorted(
        (m.user.username, m.paused_at is not None, m.paused_reason)
        for m in Membership.objects.filter(project=project, role="annotator").select_related("user")
    )
    crowd_done = sorted(
        (p.rater.name, p.completed_at is not None)
        for p in CrowdParticipant.objects.filter(study__project=project).select_related("rater")
    )
    return {"assignments": assignments, "answers": answers, "slots": slots, "members": members, "crowd": crowd_done}


def differential(settings, monkeypatch, setup) -> dict[bool, tuple[list, dict]]:
    """``setup(lean)`` builds a fresh project and runs its sessions on a :class:`Recorder`;
    run with the lean path on, then off, each from the same seed, and compare step by step."""
    import random
    import types

    from rest_framework.views import APIView

    from annotate import annotating
    from studies import quality

    reached, lean_submits = [], []
    dispatch, submit_mine = APIView.dispatch, annotating.submit_mine

    def counting_dispatch(self, request, *args, **kwargs):
        reached.append(request.path)
        return dispatch(self, request, *args, **kwargs)

    def counting_submit(**kwargs):
        lean_submits.append(kwargs["assignment_id"])
        return submit_mine(**kwargs)

    monkeypatch.setattr(APIView, "dispatch", counting_dispatch)
    monkeypatch.setattr(annotating, "submit_mine", counting_submit)
    runs = {}
    for lean in (True, False):
        settings.HV_LEAN_API = lean
        reached.clear()
        lean_submits.clear()
        cache.clear()  # the rates and cached QC item lists start afresh for each run
        rng = random.Random(21)  # which gold item is injected: the same draws on both runs
        monkeypatch.setattr(quality, "random", types.SimpleNamespace(choice=rng.choice, Random=random.Random))
        rec = setup(lean)
        label = labels(rec.project)
        runs[lean] = (rec.named(label), final_state(rec.project, label))
        # each path really took its own way: the lean one served the loop without DRF
        stored = [e for e in rec.log if e[1].endswith(("submit left", "submit right")) and e[2] in (201, 302)]
        assert stored and len(lean_submits) == (len(stored) if lean else 0)
        loop = [e for e in rec.log if "api " in e[1] and e[1] != "api next"]
        handed_over = [e for e in loop if e[2] >= 300]  # refusals: the lean path leaves them to DRF
        assert sum(1 for path in reached if path.startswith("/api/assignments/")) == len(handed_over if lean else loop)
    (lean_log, lean_state), (plain_log, plain_state) = runs[True], runs[False]
    assert len(lean_log) == len(plain_log), [e[:4] for e in lean_log] + ["|"] + [e[:4] for e in plain_log]
    for i, (on, off) in enumerate(zip(lean_log, plain_log, strict=True)):
        assert on == off, f"step {i}: {on[:4]} (lean) != {off[:4]} (ordinary)"
    assert lean_state == plain_state
    return runs


def test_differential_quality_control_with_attention_and_gold_until_a_pause(
    researcher, settings, monkeypatch, annotators
):
    """Attention and gold items injected at a quarter of the submitted work each, scored at
    submit; the second gold answer is wrong and the gold accuracy (1 of 2) pauses the annotator:
    the next item is then nothing on both paths, the page says why, and what is left stays."""
    qc = {"attention_rate": 0.25, "attention_pause_after": 2, "gold_rate": 0.25}
    qc |= {"gold_min_answered": 2, "gold_threshold": 0.8, "gold_pause": True}
    ann = annotators[0]

    def setup(lean):
        project = turing_project(researcher, [ann], n=10, qc=qc, extra=QC_RECORDS)
        rec = Recorder(project)
        who = Annotator(rec, "ann1", rec.client(ann), f"/projects/{project.id}/next/", answer_policy())
        run_sessions(rec, [who])
        after_the_end(rec, who, ann)
        return rec

    runs = differential(settings, monkeypatch, setup)
    log, state = runs[True]
    purposes = [p for _, _, p, *_ in state["assignments"]]
    assert purposes.count("attention") == 2 and purposes.count("gold") == 2
    assert {(a[2], a[3]) for a in state["assignments"] if a[2] != "regular"} == {
        ("attention", True),
        ("attention", False),
        ("gold", True),
        ("gold", False),
    }
    assert state["members"] == [("ann1", True, "gold accuracy 50% below 80%")]
    assert (
        "paused" in next(e for e in log if e[1] == "page next")[5]
        and sum(1 for a in state["assignments"] if a[1] == "assigned") >= 1
    )


def test_differential_repeats(researcher, settings, monkeypatch, annotators):
    """Every submitted item is shown again once (repeat rate 1: with one candidate at each
    injection, the database's random pick has no choice to make), answered the other way."""
    ann = annotators[0]

    def setup(lean):
        project = turing_project(researcher, [ann], n=5, qc={"repeat_rate": 1.0})
        rec = Recorder(project)
        who = Annotator(rec, "ann1", rec.client(ann), f"/projects/{project.id}/next/", answer_policy())
        run_sessions(rec, [who])
        return rec

    runs = differential(settings, monkeypatch, setup)
    state = runs[True][1]
    assert [a[2] for a in state["assignments"]].count("repeat") == 5
    assert {a[1] for a in state["assignments"]} == {"submitted"}


def test_differential_crowd_participant_ends_at_the_quota(researcher, settings, monkeypatch):
    """A Prolific participant (entered through the study link, logged in by it) with three items
    per participant and six in their queue: after the third the next item is nothing and both
    paths end on the study's completion page; an item still open can be answered late."""
    from studies import crowd

    def setup(lean):
        project = turing_project(researcher, [], n=6)
        study = crowd.create_study(project=project, name="s", completion_code="DONE21", items_per_participant=3)
        rec = Recorder(project, study)
        c = rec.client()
        rec.seen("p", "entry", c.get(f"/p/{study.token}/?PROLIFIC_PID=pid21&STUDY_ID=st&SESSION_ID=se"))
        c.cookies["csrftoken"] = "t" * 32  # logging in rotated it
        who = Annotator(rec, "p", c, f"/p/{study.token}/work/", answer_policy())
        run_sessions(rec, [who])
        after_the_end(rec, who, crowd.CrowdParticipant.objects.get(study=study).rater.user)
        return rec

    runs = differential(settings, monkeypatch, setup)
    log, state = runs[True]
    ends = [e for e in log if e[1] == "page next"]
    assert ends and ends[0][4][-1] == ("/p/#token/done/", 302) and "DONE21" in ends[0][5]
    assert state["crowd"] == [(state["crowd"][0][0], True)]
    assert [a[1] for a in state["assignments"]].count("submitted") == 4


def test_differential_pooled_plan_claims_after_the_own_queue(researcher, settings, monkeypatch, annotators):
    """Three items in the annotator's own queue (the default rows: the lean statement probes the
    queue as it stores), then a pooled plan's slots: once the queue is empty each next item is a
    claim under a lease, and each submit marks its slot."""
    ann, other = annotators

    def setup(lean):
        project = turing_project(researcher, [ann, other], n=6)  # k=1: ann gets every other item
        sample = sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=6, seed=1)
        plans.create_plan(sample=sample, mode="pooled", k=1, lease_seconds=600)
        rec = Recorder(project)
        who = Annotator(rec, "ann1", rec.client(ann), f"/projects/{project.id}/next/", answer_policy())
        run_sessions(rec, [who])
        return rec

    runs = differential(settings, monkeypatch, setup)
    state = runs[True][1]
    mine = [a for a in state["assignments"] if a[0].startswith("ann1/")]
    assert len(mine) == 6 and sum(1 for a in mine if a[4]) == 3 and {a[1] for a in mine} == {"submitted"}
    assert sorted(s[1] for s in state["slots"]) == ["open"] * 3 + ["submitted"] * 3


def test_differential_preassigned_plan_with_a_second_annotator(researcher, settings, monkeypatch, annotators):
    """The control: a pre-assigned plan shared by two annotators whose sessions take turns (each
    submit of a plan row takes the slot path, then the queue probe); neither can open the
    other's item."""
    ann, other = annotators

    def setup(lean):
        project = turing_project(researcher, [ann, other], n=8, plans_only=True)
        sample = sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=8, seed=1)
        plans.create_plan(sample=sample, mode="preassigned", k=1)
        rec = Recorder(project)
        theirs = queue(project, other)[0]
        first = Annotator(rec, "ann1", rec.client(ann), f"/projects/{project.id}/next/", answer_policy())
        second = Annotator(rec, "ann2", rec.client(other), f"/projects/{project.id}/next/", answer_policy())
        rec.seen("ann1", "api GET theirs", first.c.get(f"/api/assignments/{theirs}/"))
        rec.seen("ann1", "page GET theirs", first.c.get(f"/a/{theirs}/"))
        run_sessions(rec, [first, second])
        return rec

    runs = differential(settings, monkeypatch, setup)
    log, state = runs[True]
    assert [e[2] for e in log if "theirs" in e[1]] == [404, 404]
    assert {a[1] for a in state["assignments"]} == {"submitted"} and all(a[4] for a in state["assignments"])
    assert {a[0].split("/")[0] for a in state["assignments"]} == {"ann1", "ann2"}
