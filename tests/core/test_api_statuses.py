"""Issue 37: the OpenAPI schema lists the statuses each operation answers (``core.schema``),
not only its success: 400, 401/403, 404 on an object's route, 413, 415 where it reads a body,
429; and the refusals the API really gives are the ones listed, in the documented body."""

from __future__ import annotations

import jsonschema
import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from accounts import services as tokens
from core.api import error_body
from core.errors import DomainError
from tests.annotation.factories import make_project, make_user

METHODS = ("get", "put", "post", "patch", "delete")


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema):
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def openapi_to_json_schema(node):
    """OpenAPI 3.0's ``nullable`` as JSON Schema, recursively (the error body has none, but a
    view's own refusal may)."""
    if isinstance(node, list):
        return [openapi_to_json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: openapi_to_json_schema(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable"):
        out = {"anyOf": [out, {"type": "null"}]}
    return out


def documented_body(schema, path: str, method: str, status: int) -> dict:
    response = schema["paths"][path][method]["responses"][str(status)]
    return openapi_to_json_schema(
        {**response["content"]["application/json"]["schema"], "components": schema["components"]}
    )


def test_every_operation_lists_the_refusals_it_can_answer(schema):
    missing = []
    count = 0
    for path, method, op in operations(schema):
        count += 1
        expected = {"400", "401", "403", "413", "429"}
        if "{" in path:
            expected.add("404")
        if "requestBody" in op:
            expected.add("415")
        listed = set(op["responses"])
        if not expected <= listed:
            missing.append(f"{method.upper()} {path}: {sorted(expected - listed)}")
        # "default" would let any status pass the status-code check
        assert "default" not in listed, (method, path)
        assert any(code.startswith("2") for code in listed), (method, path)
    assert count >= 44, count
    assert missing == []


def test_only_routes_of_an_object_list_404_and_only_operations_with_a_body_415(schema):
    for path, method, op in operations(schema):
        assert ("404" in op["responses"]) == ("{" in path), (method, path)
        assert ("415" in op["responses"]) == ("requestBody" in op), (method, path)
    listed = schema["paths"]["/api/projects/"]
    assert "404" not in listed["get"]["responses"] and "415" in listed["post"]["responses"]
    assert "415" not in schema["paths"]["/api/judge-runs/{run_id}/cancel/"]["post"]["responses"]  # no body read


def test_every_refusal_has_the_one_error_body_and_the_413_is_plain_text(schema):
    for path, method, op in operations(schema):
        for code in ("401", "403", "429", *(["404"] if "{" in path else [])):
            content = op["responses"][code]["content"]
            assert content == {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}, (
                method,
                path,
                code,
            )
        assert set(op["responses"]["413"]["content"]) == {"text/plain"}
    assert schema["components"]["schemas"]["Error"]["type"] == "object"


def test_a_domain_errors_body_is_the_documented_error_body(schema):
    body = error_body(DomainError("no such run", code="not_found", errors={"run": "gone"}))
    error = openapi_to_json_schema({"$ref": "#/components/schemas/Error", "components": schema["components"]})
    jsonschema.validate(body, error)
    jsonschema.validate(error_body(DomainError("bad lines", errors=["line 2: no id"])), error)
    with pytest.raises(jsonschema.ValidationError):  # the schema is not a blank cheque
        jsonschema.validate({"detail": 3}, error)


@pytest.mark.django_db
def test_the_refusals_the_api_gives_are_listed_with_their_bodies(schema, settings):
    """Real answers (DRF's validation, authentication, permission, not found, media type and the
    body limit), each listed for its operation and in the documented body."""
    owner = make_user("status-owner", researcher=True)
    annotator = make_user("status-annotator")
    project = make_project("cqbench.turing", owner=owner, annotators=[annotator], k=1)
    _, key = tokens.create_token(user=owner, name="statuses")
    client = Client(headers={"Authorization": f"Token {key}"})

    def answered(response, path: str, method: str, status: int) -> None:
        assert response.status_code == status, (path, response.status_code, response.content[:200])
        jsonschema.validate(response.json(), documented_body(schema, path, method, status))

    # 400: DRF's field -> reasons
    r = client.post("/api/projects/", {"name": "x", "preset": "no-such-preset"}, content_type="application/json")
    answered(r, "/api/projects/", "post", 400)
    assert "preset" in r.json()
    # 401: a wrong token; 403: no credentials at all (a browser's answer), or not allowed
    r = Client(headers={"Authorization": "Token wrong"}).get("/api/projects/")
    answered(r, "/api/projects/", "get", 401)
    answered(Client().get("/api/projects/"), "/api/projects/", "get", 403)
    _, annotator_key = tokens.create_token(user=annotator, name="statuses")
    as_annotator = Client(headers={"Authorization": f"Token {annotator_key}"})
    r = as_annotator.post("/api/projects/", {"name": "x", "preset": "cqbench.turing"}, content_type="application/json")
    answered(r, "/api/projects/", "post", 403)
    # 404: no such object, or one the caller may not see (a project's judges, to its annotator)
    r = as_annotator.get(f"/api/projects/{project.id}/judges/")
    answered(r, "/api/projects/{project_id}/judges/", "get", 404)
    answered(client.get("/api/judge-runs/987654/"), "/api/judge-runs/{run_id}/", "get", 404)
    # 415: a body of a type the operation does not read
    r = client.post("/api/projects/", "name=x", content_type="text/csv")
    answered(r, "/api/projects/", "post", 415)
    # 413: over the body limit, answered before DRF in plain text
    settings.HV_MAX_BODY_BYTES = 16
    r = client.post("/api/projects/", {"name": "a name longer than sixteen bytes"}, content_type="application/json")
    assert r.status_code == 413 and r["Content-Type"].startswith("text/plain")
    assert "413" in schema["paths"]["/api/projects/"]["post"]["responses"]


@pytest.mark.django_db
def test_integers_past_64_bits_in_any_parameter_are_refused_or_read_never_a_server_error(schema):
    """Issue 37, M6: ``?limit=2**63`` was a 500 on three lists. Every integer parameter of every
    read, in the query or the path, at 2^63 and 2^64 (past PostgreSQL's bigint and SQLite's
    integer): an answer the operation lists, never a 5xx."""
    owner = make_user("huge-owner", researcher=True)
    project = make_project("cqbench.turing", owner=owner, annotators=[make_user("huge-ann")], k=1)
    _, key = tokens.create_token(user=owner, name="huge")
    client = Client(headers={"Authorization": f"Token {key}"})
    tried = []
    for path, method, op in operations(schema):
        if method != "get":
            continue
        params = [p for p in op.get("parameters", []) if p["schema"].get("type") == "integer"]
        for param in params:
            for huge in (2**63, 2**64):
                url, query = path, {}
                for p in op.get("parameters", []):
                    if p["in"] == "path":
                        value = huge if p is param else project.id
                        url = url.replace("{" + p["name"] + "}", str(value))
                if param["in"] == "query":
                    query[param["name"]] = str(huge)
                r = client.get(url, query)
                tried.append((url, query))
                assert r.status_code < 500, (url, query, r.status_code)
                assert str(r.status_code) in op["responses"], (url, query, r.status_code)
    assert len(tried) >= 40, tried
    assert ("/api/projects/", {"limit": str(2**63)}) in tried
