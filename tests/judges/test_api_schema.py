"""Issue 12, finding 15 (part): every judges API view declares its request and response bodies
for the OpenAPI schema (drf-spectacular); none is left for spectacular to guess (an error that
drops the view from the schema) or to default (a warning), and the answers match the schema."""

from __future__ import annotations

import pytest
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

from judges import configuration

from .helpers import project_with_demo

JUDGE_PATHS = {
    "/api/projects/{project_id}/judges/": {"get", "post"},
    "/api/projects/{project_id}/judges/import/": {"post"},
    "/api/projects/{project_id}/judges/{config_id}/runs/": {"get", "post"},
    "/api/judge-runs/{run_id}/": {"get"},
    "/api/judge-runs/{run_id}/cancel/": {"post"},
    "/api/judge-runs/{run_id}/rerun-failed/": {"post"},
    "/api/judge-runs/{run_id}/outputs/": {"get"},
}


@pytest.fixture(scope="module")
def schema_and_messages():
    GENERATOR_STATS.reset()
    GENERATOR_STATS._traces.clear()
    schema = SchemaGenerator().get_schema(request=None, public=True)
    messages = [*GENERATOR_STATS._warn_cache, *GENERATOR_STATS._error_cache]
    GENERATOR_STATS.reset()
    return schema, messages


def test_the_schema_is_valid_openapi(schema_and_messages):
    schema, _messages = schema_and_messages
    validate_schema(schema)


def test_no_judge_view_is_guessed_or_defaulted(schema_and_messages):
    _schema, messages = schema_and_messages
    judges = [m for m in messages if "judges/" in m or "Judge" in m]
    assert judges == []


def test_curation_api_views_are_not_guessed(schema_and_messages):
    _schema, messages = schema_and_messages
    assert [m for m in messages if "curation/" in m] == []


@pytest.mark.parametrize("path", sorted(JUDGE_PATHS))
def test_every_judge_operation_has_typed_responses(schema_and_messages, path):
    schema, _messages = schema_and_messages
    assert path in schema["paths"], sorted(p for p in schema["paths"] if "judge" in p)
    ops = schema["paths"][path]
    assert JUDGE_PATHS[path] <= set(ops)
    for method in JUDGE_PATHS[path]:
        op = ops[method]
        success = {code: r for code, r in op["responses"].items() if code.startswith("2")}
        assert success, (path, method)
        for response in success.values():
            body = response["content"]["application/json"]["schema"]
            assert body.get("$ref") or body.get("type") in ("array", "object"), (path, method, body)
        if method == "post" and not path.endswith(("/cancel/", "/rerun-failed/")):
            assert "requestBody" in op, (path, method)


def json_schema(node):
    """OpenAPI 3.0's ``nullable`` as JSON Schema (``type: [t, "null"]``), recursively."""
    if isinstance(node, list):
        return [json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: json_schema(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable"):
        if "type" in out:
            out["type"] = [out["type"], "null"]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


@pytest.mark.django_db
def test_judge_answers_match_the_schema(researcher, tmp_path, schema_and_messages, django_capture_on_commit_callbacks):
    """The run endpoints answer what the schema declares (the run list, a started run, a
    cancelled run, the outputs page), checked with the schema's own JSON Schema."""
    import jsonschema
    from django.test import Client

    schema, _messages = schema_and_messages
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="minilm", backend="embedding")
    c = Client()
    c.force_login(researcher)

    def check(path: str, method: str, code: int, body) -> None:
        declared = schema["paths"][path][method]["responses"][str(code)]["content"]["application/json"]["schema"]
        jsonschema.validate(body, json_schema({**declared, "components": schema["components"]}))

    with django_capture_on_commit_callbacks(execute=False):
        r = c.post(f"/api/projects/{project.id}/judges/{config.id}/runs/", {}, content_type="application/json")
    assert r.status_code == 201, r.content
    check("/api/projects/{project_id}/judges/{config_id}/runs/", "post", 201, r.json())
    run_id = r.json()["id"]
    r = c.get(f"/api/projects/{project.id}/judges/{config.id}/runs/")
    assert r.status_code == 200 and [x["id"] for x in r.json()] == [run_id]
    check("/api/projects/{project_id}/judges/{config_id}/runs/", "get", 200, r.json())
    r = c.post(f"/api/judge-runs/{run_id}/cancel/")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    check("/api/judge-runs/{run_id}/cancel/", "post", 200, r.json())
    r = c.get(f"/api/judge-runs/{run_id}/outputs/?failures=1")
    assert r.status_code == 200 and r.json()["count"] == 0
    check("/api/judge-runs/{run_id}/outputs/", "get", 200, r.json())


@pytest.mark.django_db
def test_outputs_and_failures_without_a_member_match_the_schema(researcher, tmp_path, schema_and_messages):
    """Issue 23, finding 4: a single judge's outputs and failures answer ``"member": null``; the
    schema says the member is nullable."""
    import jsonschema
    from django.test import Client

    from judges.models import JudgeItemResult, JudgeOutput, JudgeRun

    schema, _messages = schema_and_messages
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="minilm", backend="embedding")
    item = project.items.first()
    run = JudgeRun.objects.create(config=config, project=project, item_ids=[item.id], total=1, status="done")
    JudgeOutput.objects.create(run=run, item=item, pass_index=0, member=None, raw_output="?", error="bad reply")
    JudgeItemResult.objects.create(run=run, item=item, status="failed", error="pass 1: bad reply")
    c = Client()
    c.force_login(researcher)
    for path, url in [
        ("/api/judge-runs/{run_id}/outputs/", f"/api/judge-runs/{run.id}/outputs/"),
        ("/api/judge-runs/{run_id}/failures/", f"/api/judge-runs/{run.id}/failures/"),
    ]:
        r = c.get(url)
        assert r.status_code == 200, r.content
        assert '"member":null' in r.content.decode().replace(" ", "")
        declared = schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        jsonschema.validate(r.json(), json_schema({**declared, "components": schema["components"]}))


@pytest.mark.django_db
def test_the_item_imports_400_for_a_missing_file_matches_the_schema(researcher, tmp_path, schema_and_messages):
    """Issue 23, finding 4: the item import's 400 for a request without a file is what its
    declared 400 schema allows."""
    import jsonschema
    from django.test import Client

    schema, _messages = schema_and_messages
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    c = Client()
    c.force_login(researcher)
    [path] = [p for p in schema["paths"] if p.startswith("/api/projects/{") and p.endswith("}/import/")]
    r = c.post(f"/api/projects/{project.id}/import/", {})
    assert r.status_code == 400 and "data" in r.json()
    declared = schema["paths"][path]["post"]["responses"]["400"]["content"]["application/json"]["schema"]
    jsonschema.validate(r.json(), json_schema({**declared, "components": schema["components"]}))


@pytest.mark.django_db
def test_deleting_a_judge_answers_the_schemas_204_without_a_body(researcher, tmp_path, schema_and_messages):
    """Issue 37 (low): the judge's DELETE answered 200 with a body where the schema said 204;
    now both say 204, no body, and the judge is gone."""
    from django.test import Client

    from judges.models import JudgeConfig

    schema, _messages = schema_and_messages
    responses = schema["paths"]["/api/projects/{project_id}/judges/{config_id}/"]["delete"]["responses"]
    assert {code for code in responses if code.startswith("2")} == {"204"} and "content" not in responses["204"]
    assert "409" in responses  # a judge a pending run or an ensemble holds is refused
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="minilm", backend="embedding")
    c = Client()
    c.force_login(researcher)
    r = c.delete(f"/api/projects/{project.id}/judges/{config.id}/")
    assert r.status_code == 204 and r.content == b""
    assert not JudgeConfig.objects.filter(pk=config.pk).exists()


@pytest.mark.django_db
def test_deleting_a_judge_an_ensemble_uses_answers_the_schemas_409(researcher, tmp_path, schema_and_messages):
    """The refusal the DELETE documents: 409 in the documented error body, nothing deleted."""
    import jsonschema
    from django.test import Client

    from judges.models import JudgeConfig

    schema, _messages = schema_and_messages
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    member = configuration.create_judge_config(project=project, name="minilm", backend="embedding")
    other = configuration.create_judge_config(project=project, name="minilm-2", backend="embedding")
    configuration.create_judge_config(project=project, name="panel", backend="ensemble", members=[member, other])
    c = Client()
    c.force_login(researcher)
    r = c.delete(f"/api/projects/{project.id}/judges/{member.id}/")
    assert r.status_code == 409 and "panel" in r.json()["detail"] and r.json()["code"] == "conflict"
    declared = schema["paths"]["/api/projects/{project_id}/judges/{config_id}/"]["delete"]["responses"]["409"]
    body = declared["content"]["application/json"]["schema"]
    jsonschema.validate(r.json(), json_schema({**body, "components": schema["components"]}))
    assert JudgeConfig.objects.filter(pk=member.pk).exists()
