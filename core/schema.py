"""The API schema's statuses (issue 37): every operation lists the answers it can give, not only
its success, so a client (and schemathesis's status-code check) knows each one.

drf-spectacular documents what a view's ``extend_schema`` names (or its one success status);
the refusals that come from the layers around the view are the same for every operation and
are added here, each with the one error body the API answers with (:data:`ERROR_BODY`):

- 400: a malformed request, whatever the operation: a bad ``Content-Length``
  (``core.bodylimit``), a malformed ``Authorization`` header, invalid parameters or body
  (DRF's validation), or a refusal of the domain (``core.errors.DomainError``, code ``invalid``);
- 401 / 403: no or wrong credentials (401 when they came as a token or Basic, 403 for a browser
  session, ``core.security.SessionAuthentication``), or not allowed;
- 404: an operation on an object (a path with a parameter) whose object does not exist or is
  not the caller's to see;
- 413: a body over ``HV_MAX_BODY_BYTES``, on any route (``core.bodylimit``);
- 415: a body of a media type the operation does not read (an operation with a request body);
- 429: over the API's rates, or too many failed log-ins (``core.security``).

A view that answers something else (201, 202, 204, 409, ...) says so in its ``extend_schema``;
a status the view declares itself is kept as it declared it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiResponse
from rest_framework.permissions import AllowAny

#: the name of the error body's component (``#/components/schemas/Error``)
ERROR_COMPONENT = "Error"

#: every refusal's JSON body: ``core.api.error_body`` for a domain error, DRF's ``{"detail":
#: ...}`` for its own, and DRF's field -> reasons for an invalid serializer
ERROR_BODY: dict[str, Any] = {
    "type": "object",
    "description": (
        "A refusal: `detail` says what was refused and why, `code` what kind of refusal it is "
        "(invalid, not_found, forbidden, conflict, unavailable; DRF's own codes for its own). "
        "An invalid body or parameter answers each field's name with its reasons instead."
    ),
    "properties": {
        "detail": {"type": "string", "description": "what was refused and why"},
        "code": {"type": "string", "description": "the kind of refusal"},
        "errors": {
            "description": "details per field (an object) or per line (a list)",
            "oneOf": [{"type": "object"}, {"type": "array"}],
        },
    },
    "additionalProperties": {"description": "a field's name -> the reasons its value was refused"},
}

#: the plain-text answers of the layers in front of the API (``core.bodylimit``)
PLAIN_TEXT = {"text/plain": {"schema": {"type": "string"}}}


def error_response(ref: dict[str, str], description: str, *, plain_text: bool = False) -> dict[str, Any]:
    content: dict[str, Any] = {"application/json": {"schema": ref}}
    if plain_text:
        content |= PLAIN_TEXT
    return {"description": description, "content": content}


def refusal(description: str) -> OpenApiResponse:
    """A view's own refusal for its ``extend_schema`` (a 409, say), with the one error body."""
    return OpenApiResponse(response={"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}, description=description)


class AutoSchema(SpectacularAutoSchema):
    """``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]``: drf-spectacular's, with the statuses every
    operation can answer added to what the view declares (see the module's text)."""

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:  # left out of the schema
            return None
        responses: dict[str, Any] = operation.setdefault("responses", {})
        for code, response in self.refusals(reads_body="requestBody" in operation).items():
            responses.setdefault(code, response)
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def refusals(self, *, reads_body: bool) -> dict[str, dict[str, Any]]:
        """The refusals this operation can answer, by status code (``reads_body``: it has a
        request body, so DRF's parser refuses a media type it does not read)."""
        ref = self.error_component().ref
        found: dict[str, dict[str, Any]] = {
            "400": error_response(ref, "The request is malformed or invalid; nothing changed.", plain_text=True),
        }
        if not self.allows_anyone():
            found["401"] = error_response(ref, "The credentials sent (a token or Basic) are wrong or revoked.")
            found["403"] = error_response(ref, "Not signed in (no credentials), or not allowed to do this.")
        if "{" in self.path:
            found["404"] = error_response(ref, "No such object, or not one the caller may see.")
        # answered by core.bodylimit before DRF, in plain text only
        found["413"] = {"description": "The request body is over the server's limit.", "content": PLAIN_TEXT}
        if reads_body:
            found["415"] = error_response(ref, "The body's media type is not one this operation reads.")
        if self.view.get_throttles():
            found["429"] = error_response(ref, "Too many requests (or failed log-ins): try again later.")
        return found

    def allows_anyone(self) -> bool:
        return all(isinstance(p, AllowAny) for p in self.view.get_permissions())

    def error_component(self) -> ResolvedComponent:
        component = ResolvedComponent(
            name=ERROR_COMPONENT, type=ResolvedComponent.SCHEMA, object=ERROR_COMPONENT, schema=ERROR_BODY
        )
        self.registry.register_on_missing(component)
        return component
