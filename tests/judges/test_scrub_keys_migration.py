"""Issue 12, finding 11: the data migration ``judges.0005_scrub_literal_keys`` removes literal
secrets stored in judge parameters before they were refused (``JudgeConfig.params`` and the judge
rater's ``Rater.parameters``), at any depth, records which names it removed, and leaves every
other parameter (``api_key_env``, ``max_tokens``...) and every other row as it was."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("judges", "0004_judgerun_lease")]
AFTER = [("judges", "0005_scrub_literal_keys")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def leaves():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


def test_literal_keys_are_removed_and_the_removal_recorded():
    old = migrate(BEFORE)
    User = old.get_model("auth", "User")
    RubricVersion = old.get_model("annotation", "RubricVersion")
    Project = old.get_model("annotation", "Project")
    Rater = old.get_model("annotation", "Rater")
    JudgeConfig = old.get_model("judges", "JudgeConfig")
    from benchmarks.registry import get_preset

    preset = get_preset("cqbench.turing")
    owner = User.objects.create(username="owner")
    rubric = RubricVersion.objects.create(rubric_key=preset.key, version=1, schema=preset.rubric, schema_hash="s" * 64)
    project = Project.objects.create(name="p", preset_key=preset.key, rubric_version=rubric, created_by=owner)
    leaky = {
        "base_url": "http://127.0.0.1:8000/v1",
        "api_key": "sk-live-123",
        "api_key_env": "HV_JUDGE_API_KEY",
        "max_tokens": 64,
        "headers": {"Authorization": "Bearer sk-live-456", "X-Trace": "1"},
        "extra": [{"accessToken": "t0k"}, {"temperature": 0}],
        "apiKey": "sk-live-789",
        "bearer": "b",
        "key": "k",
    }
    rater = Rater.objects.create(kind="model", name="judge: leaky", backend="openai_chat", parameters=dict(leaky))
    config = JudgeConfig.objects.create(
        project=project, name="leaky", backend="openai_chat", model_id="m", rater=rater, params=dict(leaky)
    )
    clean_params = {"base_url": "http://127.0.0.1:8000/v1", "max_tokens": 64, "api_key_env": "HV_JUDGE_KEY_A"}
    clean_rater = Rater.objects.create(kind="model", name="judge: clean", backend="openai_chat", parameters={})
    clean = JudgeConfig.objects.create(
        project=project, name="clean", backend="openai_chat", model_id="m", rater=clean_rater, params=clean_params
    )
    human = Rater.objects.create(kind="human", user=owner, name="ann", parameters={"note": "keep me"})

    new = migrate(AFTER)
    JudgeConfig = new.get_model("judges", "JudgeConfig")
    Rater = new.get_model("annotation", "Rater")
    removed = ["apiKey", "api_key", "bearer", "extra.0.accessToken", "headers.Authorization", "key"]
    expected = {
        "base_url": "http://127.0.0.1:8000/v1",
        "api_key_env": "HV_JUDGE_API_KEY",
        "max_tokens": 64,
        "headers": {"X-Trace": "1"},
        "extra": [{}, {"temperature": 0}],
        "secrets_removed": removed,
    }
    assert JudgeConfig.objects.get(pk=config.pk).params == expected
    assert Rater.objects.get(pk=rater.pk).parameters == expected
    assert JudgeConfig.objects.get(pk=clean.pk).params == clean_params
    assert Rater.objects.get(pk=clean_rater.pk).parameters == {}
    assert Rater.objects.get(pk=human.pk).parameters == {"note": "keep me"}
    for text in ("sk-live", "t0k", "Bearer"):
        assert text not in str(JudgeConfig.objects.get(pk=config.pk).params)
    migrate(leaves())  # back to today's schema for the tests that follow


def test_the_secret_test_matches_the_apps_own():
    """The migration keeps its own copy of the rule; today it is the app's rule."""
    import importlib

    from judges import endpoints

    m = importlib.import_module("judges.migrations.0005_scrub_literal_keys")
    names = ["api_key", "apiKey", "key", "token", "access_token", "Authorization", "bearer", "password", "x_secret"]
    names += ["api_key_env", "max_tokens", "base_url", "keyword", "monkey", "temperature", "auth_mode"]
    assert [m.is_secret_name(n) for n in names] == [endpoints.is_secret_name(n) for n in names]
    assert m.is_secret_name("api_key") and not m.is_secret_name("max_tokens")
