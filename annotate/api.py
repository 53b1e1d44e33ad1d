"""The annotator loop's REST API: my assignments, one assignment to answer, submitting, editing
and skipping, and the next assignment of a project. The same services and rubric validator as
the annotate page; the two hottest requests may be answered before this by the lean path
(:mod:`annotate.hot_api`), which must give the same answers."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import FormParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import projects, selectors
from annotation.access import annotator_project_or_404, as_id
from annotation.models import Assignment
from annotation.presentation import annotator_item_payload, item_render_context
from core.parsers import JSONParser
from studies.next_item import next_after_submit, next_assignment

from . import annotating
from .annotating import LOCALE_MAX_LENGTH


class AssignmentListSerializer(serializers.ModelSerializer):
    item_external_id = serializers.CharField(source="item.external_id")

    class Meta:
        model = Assignment
        fields = ["id", "project", "item_external_id", "status", "position", "submitted_at"]


class AnswerSerializer(serializers.Serializer):
    answers = serializers.DictField(help_text="question id -> answer, as the rubric schema defines")
    duration_ms = serializers.IntegerField(required=False, min_value=0)
    locale = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=LOCALE_MAX_LENGTH,
        help_text="the wording the rubric was shown in: 'en' (the paper's, canonical) or a key of the rubric's "
        "translations; stored with the answer",
    )


class SkipSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)


class AssignmentViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """The caller's own assignments only; anyone else's are 404."""

    serializer_class = AssignmentListSerializer
    queryset = Assignment.objects.none()  # the schema's id type; rows come from get_queryset

    def get_queryset(self):
        qs = selectors.my_assignments(self.request.user)
        project = self.request.query_params.get("project")
        if not project:
            return qs
        try:
            return qs.filter(project_id=as_id(project))
        except Http404:
            raise ValidationError({"project": f"{project!r} is not a project id"}) from None

    def _mine(self, pk: str) -> Assignment:
        assignment = selectors.my_assignment(self.request.user, as_id(pk))
        if assignment is None:
            raise NotFound("no such assignment in your queue")
        return assignment

    @extend_schema(parameters=[OpenApiParameter("project", int, description="only this project")])
    def list(self, request: Request, *args, **kwargs) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        responses=inline_serializer(
            "AssignmentDetail",
            {
                "id": serializers.IntegerField(),
                "project": serializers.IntegerField(),
                "status": serializers.CharField(),
                "item": serializers.DictField(),
                "rubric": serializers.DictField(),
                "rubric_version": serializers.IntegerField(),
                "answers": serializers.DictField(allow_null=True),
            },
        )
    )
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        """The item (as the annotator sees it, pairs as left/right), the rubric schema and my answer."""
        assignment = self._mine(pk)
        annotating.open_assignment(assignment=assignment, rater=assignment.rater)
        annotation = (
            getattr(assignment, "annotation", None) if assignment.status == Assignment.Status.SUBMITTED else None
        )
        return Response(
            {
                "id": assignment.id,
                "project": assignment.project_id,
                "status": assignment.status,
                "item": annotator_item_payload(assignment=assignment, item_ctx=item_render_context(assignment.item)),
                "rubric": assignment.project.rubric_version.parsed().raw,
                "rubric_version": assignment.project.rubric_version.version,
                "answers": annotation.answers if annotation else None,
            }
        )

    def _store(self, request: Request, pk: str, *, edit: bool) -> Response:
        assignment = self._mine(pk)
        body = AnswerSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        annotation = annotating.submit_annotation(
            assignment_id=assignment.id,
            rater=assignment.rater,
            answers=body.validated_data["answers"],
            duration_ms=body.validated_data.get("duration_ms"),
            edit=edit,
            loaded=assignment,
            locale=body.validated_data.get("locale", ""),
        )
        nxt = next_after_submit(rater=assignment.rater, project=assignment.project, queue_next=False)
        return Response(
            {
                "answers": annotation.answers,
                "derived": annotation.derived,
                "revision": annotation.revision,
                "next": nxt,
            },
            status=status.HTTP_200_OK if edit else status.HTTP_201_CREATED,
        )

    @extend_schema(request=AnswerSerializer, responses={201: dict, 400: dict})
    @action(detail=True, methods=["post"], parser_classes=[JSONParser])
    def submit(self, request: Request, pk: str | None = None) -> Response:
        """Submit answers once; a second submit is refused (use PUT answer to edit)."""
        return self._store(request, pk, edit=False)

    @extend_schema(request=AnswerSerializer, responses={200: dict, 400: dict})
    @action(detail=True, methods=["put"], parser_classes=[JSONParser])
    def answer(self, request: Request, pk: str | None = None) -> Response:
        """Edit my submitted answer while the project is open."""
        return self._store(request, pk, edit=True)

    @extend_schema(request=SkipSerializer, responses={200: AssignmentListSerializer})
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, FormParser])
    def skip(self, request: Request, pk: str | None = None) -> Response:
        assignment = self._mine(pk)
        body = SkipSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        assignment = annotating.skip_assignment(
            assignment_id=assignment.id, rater=assignment.rater, reason=body.validated_data["reason"]
        )
        return Response(AssignmentListSerializer(assignment).data)


class NextAssignmentView(APIView):
    """``GET /api/projects/{id}/next/``: the caller's next open assignment in this project."""

    @extend_schema(
        operation_id="projects_next_retrieve",
        parameters=[
            OpenApiParameter(
                "id", int, OpenApiParameter.PATH, description="A unique integer value identifying this project."
            )
        ],
        responses={200: inline_serializer("NextAssignment", {"id": serializers.IntegerField()}), 204: None},
    )
    def get(self, request: Request, pk: str) -> Response:
        """The caller's next open assignment in this project (204 when the queue is done)."""
        project = annotator_project_or_404(request.user, pk)
        nxt = next_assignment(rater=projects.rater_for_user(request.user), project=project)
        if nxt is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response({"id": nxt.id})
