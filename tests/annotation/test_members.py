"""Members of a project (issue 14, point 3): "Add member" adds annotators by default; adding an
annotator assigns nothing once the project follows a study design (plans, or a sample drawn);
researchers make annotator accounts and one-time invitation links from the project, without the
Django admin; secrets are never shown again."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.test import Client
from django.utils import timezone

from accounts import invitations
from accounts.models import Invitation
from annotation import importing, projects
from annotation.models import Assignment, Membership, Project, Rater
from studies import sampling

from .factories import jsonl, make_project, make_user, turing_records

pytestmark = pytest.mark.django_db

GOOD_PASSWORD = "violet-harbour-1972"


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def imported(project: Project, n: int = 4) -> Project:
    report = importing.import_items(project=project, data=jsonl(turing_records(n)), data_format="jsonl")
    assert report.ok, report.errors
    return project


@pytest.fixture
def team(researcher):
    """A project on its study design (as the new-project form makes it), with items, one
    annotator, and a researcher of another project."""
    project = projects.create_project(
        name="Turing", preset_key="cqbench.turing", created_by=researcher, k_per_item=2, assignment="plans"
    )
    imported(project)
    ann = make_user("member-ann")
    projects.add_member(project=project, user=ann, role="annotator")
    return {"project": project, "annotator": ann, "outsider": make_user("elsewhere", researcher=True)}


# --------------------------------------------------------------------------- add member
def test_add_member_defaults_to_annotator(team, researcher):
    page = client_for(researcher).get(f"/projects/{team['project'].id}/")
    form = page.context["member_form"]
    assert form["role"].initial == "annotator" and form.fields["role"].choices[0][0] == "annotator"
    assert re.search(rb'<option value="annotator" selected>', page.content)


def test_new_projects_follow_their_study_design_and_members_get_nothing_before_a_plan(researcher):
    c = client_for(researcher)
    r = c.post("/projects/new/", {"name": "From the form", "preset": "cqbench.turing", "k_per_item": "2"})
    project = Project.objects.get(pk=int(r["Location"].strip("/").split("/")[-1]))
    assert project.options["assignment"] == "plans"  # the form's default: by study design
    imported(project)
    r = c.post(f"/projects/{project.id}/members/", {"username": make_user("early").username, "role": "annotator"})
    assert r.status_code == 302
    assert not Assignment.objects.filter(project=project).exists()
    page = c.get(f"/projects/{project.id}/").content.decode()
    assert "no items assigned now" in page and "study design&#x27;s plans" in page


def test_a_sample_stops_automatic_assignment_of_new_members(researcher):
    """Automatic assignment stays for projects that chose it, until the design begins."""
    project = imported(make_project("cqbench.turing", owner=researcher, k=1))
    first = make_user("first")
    projects.add_member(project=project, user=first, role="annotator")
    assert Assignment.objects.filter(project=project, rater__user=first).count() == 4  # before any sample
    sampling.draw_sample(project=project, name="pilot", strata_keys=["country"], per_stratum=1, seed=1)
    second = make_user("second")
    r = client_for(researcher).post(f"/projects/{project.id}/members/", {"username": "second", "role": "annotator"})
    assert r.status_code == 302
    assert not Assignment.objects.filter(project=project, rater__user=second).exists()
    assert Membership.objects.filter(project=project, user=second, role="annotator").exists()


def test_switching_between_automatic_and_study_design_assignment(researcher):
    project = imported(make_project("cqbench.turing", owner=researcher, k=1))
    ann = make_user("switcher")
    projects.add_member(project=project, user=ann, role="annotator")
    opened = Assignment.objects.filter(project=project, rater__user=ann).first()
    Assignment.objects.filter(pk=opened.pk).update(status="in_progress", opened_at=timezone.now())
    c = client_for(researcher)
    assert c.post(f"/projects/{project.id}/assignment/", {"assignment": "plans"}).status_code == 302
    project.refresh_from_db()
    assert project.options["assignment"] == "plans"
    assert list(Assignment.objects.filter(project=project).values_list("pk", flat=True)) == [opened.pk]
    assert c.post(f"/projects/{project.id}/assignment/", {"assignment": "default"}).status_code == 302
    project.refresh_from_db()
    assert project.options["assignment"] == "default"
    assert Assignment.objects.filter(project=project, rater__user=ann).count() == 4
    # a bad choice changes nothing
    assert c.post(f"/projects/{project.id}/assignment/", {"assignment": "chaos"}).status_code == 302
    project.refresh_from_db()
    assert project.options["assignment"] == "default"


# --------------------------------------------------------------------------- permissions
def endpoints(project: Project, invitation: Invitation) -> list[tuple[str, str]]:
    pid = project.id
    return [
        ("post", f"/projects/{pid}/assignment/"),
        ("get", f"/projects/{pid}/annotators/"),
        ("post", f"/projects/{pid}/annotators/accounts/"),
        ("post", f"/projects/{pid}/annotators/invitations/"),
        ("post", f"/projects/{pid}/annotators/invitations/{invitation.id}/revoke/"),
    ]


def test_only_the_projects_researchers_manage_annotators(team, researcher):
    project = team["project"]
    made = invitations.create_invitation(project=project, created_by=researcher)
    data = {"username": "sneaky", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD, "assignment": "default"}
    for who, status in ((team["annotator"], 403), (team["outsider"], 404), (make_user("nobody"), 404)):
        c = client_for(who)
        for method, url in endpoints(project, made.invitation):
            assert getattr(c, method)(url, data).status_code == status, (who.username, method, url)
    for method, url in endpoints(project, made.invitation):
        r = getattr(Client(), method)(url, data)
        assert r.status_code == 302 and "/login/" in r["Location"], url
    assert not get_user_model().objects.filter(username="sneaky").exists()
    assert Invitation.objects.get().revoked_at is None and Invitation.objects.count() == 1
    project.refresh_from_db()
    assert project.options["assignment"] == "plans"


# --------------------------------------------------------------------------- accounts
def test_researcher_makes_an_annotator_account(team, researcher):
    project = team["project"]
    c = client_for(researcher)
    r = c.post(
        f"/projects/{project.id}/annotators/accounts/",
        {
            "username": "li.wei",
            "password1": GOOD_PASSWORD,
            "password2": GOOD_PASSWORD,
            "attributes": "nationality = China\nregion = East Asia",
        },
        follow=True,
    )
    assert r.status_code == 200 and b"li.wei made and added as an annotator" in r.content
    assert GOOD_PASSWORD.encode() not in r.content
    user = get_user_model().objects.get(username="li.wei")
    assert authenticate(username="li.wei", password=GOOD_PASSWORD) == user
    assert Membership.objects.filter(project=project, user=user, role="annotator").exists()
    assert Rater.objects.get(user=user).attributes == {"nationality": "China", "region": "East Asia"}
    assert not Assignment.objects.filter(rater__user=user).exists()  # the design's plans assign


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"password1": "123", "password2": "123"}, b"choose another password"),
        ({"password2": GOOD_PASSWORD + "x"}, b"the two passwords differ"),
        ({"username": "member-ann"}, b"the username member-ann is taken"),
        ({"username": "MEMBER-ANN"}, b"the username MEMBER-ANN is taken"),
        ({"username": "no spaces please"}, b"that username cannot be used"),
        ({"attributes": "nationality China"}, b"write key = value"),
        ({"attributes": "crowd = yes"}, b"crowd is set by the system"),
    ],
)
def test_bad_account_requests_are_refused_and_make_nothing(team, researcher, fields, message):
    project = team["project"]
    users = get_user_model().objects.count()
    data = {"username": "newbie", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD, **fields}
    r = client_for(researcher).post(f"/projects/{project.id}/annotators/accounts/", data)
    assert r.status_code == 400 and message in r.content, r.content[-3000:]
    assert GOOD_PASSWORD.encode() not in r.content and b'value="123"' not in r.content  # never echoed
    assert get_user_model().objects.count() == users


# --------------------------------------------------------------------------- invitations
def make_link(c: Client, project: Project, **fields) -> str:
    data = {"label": "for Li", "days": "7", **fields}
    r = c.post(f"/projects/{project.id}/annotators/invitations/", data)
    assert r.status_code == 200 and r["Cache-Control"] == "no-store", r.content[-2000:]
    found = re.search(r'<code class="token">https?://[^/]+(/invite/(inv_[A-Za-z0-9_-]+)/)</code>', r.content.decode())
    assert found, "the new link is shown once"
    return found.group(1)


def test_invitation_end_to_end(team, researcher):
    project = team["project"]
    c = client_for(researcher)
    url = make_link(c, project, attributes="region = East Asia", ask="nationality: China, Germany\nnative_language")
    token = url.strip("/").split("/")[-1]
    row = Invitation.objects.get()
    assert row.token_hash == hashlib.sha256(token.encode()).hexdigest() and token not in str(row.__dict__)
    assert row.attributes == {"region": "East Asia"} and row.expires_at > timezone.now() + timedelta(days=6)
    listing = c.get(f"/projects/{project.id}/annotators/")
    assert token not in listing.content.decode() and b"for Li" in listing.content  # never shown again

    invitee = Client()
    page = invitee.get(url)
    assert page.status_code == 200 and page["Cache-Control"] == "no-store"
    assert b'name="about_nationality"' in page.content and b'<option value="Germany">' in page.content
    # a bad password: refused, the link stays unused, nothing made
    r = invitee.post(
        url,
        {
            "username": "li",
            "password1": "abc",
            "password2": "abc",
            "about_nationality": "China",
            "about_native_language": "Mandarin",
        },
    )
    assert r.status_code == 400 and b"choose another password" in r.content
    r = invitee.post(
        url,
        {
            "username": "li",
            "password1": GOOD_PASSWORD,
            "password2": GOOD_PASSWORD,
            "about_nationality": "Japan",  # not one of the choices
            "about_native_language": "Mandarin",
        },
    )
    assert r.status_code == 400
    assert not get_user_model().objects.filter(username="li").exists() and Invitation.objects.get().used_at is None

    r = invitee.post(
        url,
        {
            "username": "li",
            "password1": GOOD_PASSWORD,
            "password2": GOOD_PASSWORD,
            "about_nationality": "China",
            "about_native_language": "Mandarin",
        },
    )
    assert r.status_code == 302 and r["Location"] == f"/projects/{project.id}/queue/"
    user = get_user_model().objects.get(username="li")
    assert invitee.get(r["Location"]).status_code == 200  # logged in, in the project's queue
    assert authenticate(username="li", password=GOOD_PASSWORD) == user
    assert Membership.objects.filter(project=project, user=user, role="annotator").exists()
    assert Rater.objects.get(user=user).attributes == {
        "nationality": "China",
        "native_language": "Mandarin",
        "region": "East Asia",
    }
    row.refresh_from_db()
    assert row.used_by == user and row.used_at is not None
    assert b"used by li" in c.get(f"/projects/{project.id}/annotators/").content

    # the link is spent: a second use makes nothing
    again = Client().post(url, {"username": "li2", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD})
    assert again.status_code == 410 and b"already used" in again.content
    assert not get_user_model().objects.filter(username="li2").exists()


def test_expired_revoked_and_unknown_links_are_refused(team, researcher):
    project = team["project"]
    c = client_for(researcher)
    expired = make_link(c, project)
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    withdrawn = make_link(c, project)
    newest = Invitation.objects.order_by("-id").first()
    assert c.post(f"/projects/{project.id}/annotators/invitations/{newest.id}/revoke/").status_code == 302
    newest.refresh_from_db()
    assert newest.revoked_at is not None
    users = get_user_model().objects.count()
    data = {"username": "late", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD}
    for url, status, words in (
        (expired, 410, b"expired"),
        (withdrawn, 410, b"withdrawn"),
        ("/invite/inv_not-a-real-link/", 404, b"no such invitation"),
        ("/invite/whatever/", 404, b"no such invitation"),
    ):
        assert Client().get(url).status_code == status, url
        r = Client().post(url, data)
        assert r.status_code == status and words in r.content, url
    assert get_user_model().objects.count() == users


def test_a_logged_in_visitor_is_asked_to_log_out_first(team, researcher):
    url = make_link(client_for(researcher), team["project"])
    visitor = client_for(team["annotator"])
    assert b"log out first" in visitor.get(url).content
    r = visitor.post(url, {"username": "second-me", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD})
    assert r.status_code == 409 and not get_user_model().objects.filter(username="second-me").exists()
    assert Invitation.objects.get().used_at is None


def test_an_invitation_cannot_both_set_and_ask_an_attribute(team, researcher):
    r = client_for(researcher).post(
        f"/projects/{team['project'].id}/annotators/invitations/",
        {"days": "7", "attributes": "nationality = China", "ask": "nationality"},
    )
    assert r.status_code == 400 and b"nationality is both set and asked" in r.content
    assert not Invitation.objects.exists()


def test_an_invitee_of_an_automatic_project_gets_items_at_once(researcher):
    project = imported(make_project("cqbench.turing", owner=researcher, k=1))
    made = invitations.create_invitation(project=project, created_by=researcher, attributes={"nationality": "Japan"})
    user = invitations.accept_invitation(
        token=made.token, username="quick", password=GOOD_PASSWORD, password_again=GOOD_PASSWORD, answers={}
    )
    assert Assignment.objects.filter(project=project, rater__user=user).count() == 4
    assert Rater.objects.get(user=user).attributes == {"nationality": "Japan"}


def test_the_invitations_list_is_paged_not_cut(team, researcher, monkeypatch):
    from accounts import invitation_views

    project = team["project"]
    monkeypatch.setattr(invitation_views, "INVITATIONS_PER_PAGE", 2)
    for label in ("invitee-one", "invitee-two", "invitee-three"):
        invitations.create_invitation(project=project, created_by=researcher, label=label)
    c = client_for(researcher)
    url = f"/projects/{project.id}/annotators/"
    one = c.get(url).content.decode()
    two = c.get(url + "?page=2").content.decode()
    assert 'data-testid="pager"' in one and "page 1 of 2" in one
    assert "invitee-three" in one and "invitee-two" in one and "invitee-one" not in one  # newest first
    assert "invitee-one" in two and "invitee-three" not in two
