"""REST API (DRF): projects, items, imports, my assignments, submitting answers. The same
services and the same rubric validator as the web pages; domain refusals become answers in
``core.api.exception_handler``."""

from __future__ import annotations

from django.db.models import Q
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from benchmarks.base import STRATA_KEYS
from benchmarks.registry import PRESETS
from studies.next_item import next_assignment

from . import annotating, browse, importing, projects, selectors
from .access import annotator_project_or_404, as_id, managed_project_or_403
from .models import Assignment, ImportJob, Item, Project
from .presentation import annotator_item_payload, item_render_context


# ------------------------------------------------------------------------- serializers
class ProjectSerializer(serializers.ModelSerializer):
    preset = serializers.ChoiceField(choices=sorted(PRESETS), source="preset_key")
    rubric_version = serializers.IntegerField(source="rubric_version.version", read_only=True)

    class Meta:
        model = Project
        fields = ["id", "name", "preset", "status", "k_per_item", "show_model_hints", "rubric_version", "created_at"]
        read_only_fields = ["id", "status", "rubric_version", "created_at"]
        extra_kwargs = {"k_per_item": {"required": False}, "show_model_hints": {"required": False}}


class ItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = Item
        fields = ["id", "external_id", "version", "data", *STRATA_KEYS, "meta", "created_at"]


class ImportJobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(
        read_only=True, help_text="how far the import is, 0-100 (while it runs, the report holds its progress)"
    )

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "project",
            "status",
            "percent",
            "original_name",
            "data_format",
            "report",
            "created_at",
            "finished_at",
        ]


class ImportUploadSerializer(serializers.Serializer):
    data = serializers.FileField(help_text="JSONL or CSV file")
    images = serializers.FileField(required=False, help_text="zip of images")


#: the import's 400: the failed job's report, or (no job made) the upload's fields and why
IMPORT_REFUSED = {
    "oneOf": [
        {"$ref": "#/components/schemas/ImportJob"},
        {
            "type": "object",
            "description": "the upload itself was refused, no job made: field name -> reasons",
            "properties": {
                name: {"type": "array", "items": {"type": "string"}} for name in ("data", "images", "non_field_errors")
            }
            | {"detail": {"type": "string"}},
            "additionalProperties": False,
            "minProperties": 1,
        },
    ]
}


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
        max_length=20,
        help_text="the wording the rubric was shown in: 'en' (the paper's, canonical) or a key of the rubric's "
        "translations; stored with the answer",
    )


class SkipSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)


# ------------------------------------------------------------------------- viewsets
class ProjectViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Projects the caller manages (researchers, admins) or annotates."""

    serializer_class = ProjectSerializer
    queryset = Project.objects.none()  # the schema's id type; rows come from get_queryset

    def get_queryset(self):
        user = self.request.user
        managed = selectors.managed_projects(user).values("pk")
        annotated = selectors.annotator_projects(user).values("pk")
        return (
            Project.objects.filter(Q(pk__in=managed) | Q(pk__in=annotated))
            .select_related("rubric_version")
            .order_by("id")
        )

    def _managed(self) -> Project:
        # a project the caller cannot see at all is a 404, one they only annotate in a 403
        project = get_object_or_404(self.get_queryset(), pk=as_id(self.kwargs["pk"]))
        return managed_project_or_403(self.request.user, project.pk)

    def perform_create(self, serializer):
        if not selectors.can_create_projects(self.request.user):
            raise PermissionDenied("only researchers and admins can create projects")
        data = serializer.validated_data
        serializer.instance = projects.create_project(
            name=data["name"],
            preset_key=data["preset_key"],
            created_by=self.request.user,
            k_per_item=data.get("k_per_item"),
            show_model_hints=data.get("show_model_hints"),
        )

    @extend_schema(
        responses=ItemSerializer(many=True),
        parameters=[
            OpenApiParameter("q", str, description="text in the external id or the item's text fields"),
            OpenApiParameter("stratum", str, description="key=value over strata columns or meta keys"),
            OpenApiParameter("status", str, enum=list(browse.ITEM_STATUSES), description="work status"),
            OpenApiParameter("decision", str, enum=list(browse.DECISIONS), description="curation decision"),
            OpenApiParameter("sample", str, description="in (any design sample), out (none) or a sample id"),
        ],
    )
    @action(detail=True, methods=["get"])
    def items(self, request: Request, pk: str | None = None) -> Response:
        """The project's items, filtered as on the item browser page (all filters optional)."""
        project = self._managed()
        qs = browse.browse_items(project, browse.ItemFilters.from_query(request.query_params, project))
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(ItemSerializer(page, many=True).data)

    @extend_schema(
        request=ImportUploadSerializer,
        responses={201: ImportJobSerializer, 202: ImportJobSerializer, 400: IMPORT_REFUSED},
    )
    @action(detail=True, methods=["post"], parser_classes=[MultiPartParser, FormParser], url_path="import")
    def import_items(self, request: Request, pk: str | None = None) -> Response:
        """Import items (all or nothing). Small files answer 201 with the report, or 400 with the
        problems by line; large ones answer 202 and run on a worker: poll /api/imports/{id}/."""
        project = self._managed()
        upload = ImportUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        data, images = upload.validated_data["data"], upload.validated_data.get("images")
        job = importing.start_import(
            project=project,
            user=request.user,
            data_name=data.name,
            data_stream=data.chunks(),
            images_name=images.name if images else None,
            images_stream=images.chunks() if images else None,
        )
        code = {ImportJob.Status.DONE: 201, ImportJob.Status.FAILED: 400}.get(job.status, 202)
        return Response(ImportJobSerializer(job).data, status=code)

    @extend_schema(responses={200: inline_serializer("NextAssignment", {"id": serializers.IntegerField()}), 204: None})
    @action(detail=True, methods=["get"], url_path="next")
    def next_assignment(self, request: Request, pk: str | None = None) -> Response:
        """The caller's next open assignment in this project (204 when the queue is done)."""
        project = annotator_project_or_404(request.user, pk)
        nxt = next_assignment(rater=projects.rater_for_user(request.user), project=project)
        if nxt is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response({"id": nxt.id})


class ImportJobViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = ImportJobSerializer
    queryset = ImportJob.objects.none()  # the schema's id type; rows come from get_queryset

    def get_queryset(self):
        return ImportJob.objects.filter(project__in=selectors.managed_projects(self.request.user).values("pk"))


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
        nxt = next_assignment(rater=assignment.rater, project=assignment.project)
        return Response(
            {
                "answers": annotation.answers,
                "derived": annotation.derived,
                "revision": annotation.revision,
                "next": nxt.id if nxt else None,
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
