"""``GET /api/projects/{id}/items/``: the project's items, filtered as on the item browser page
(:mod:`curation.browse`)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.access import managed_visible_project
from annotation.api import ItemSerializer
from annotation.models import Item

from . import browse


class ProjectItemsView(GenericAPIView):
    """The items of a project the caller manages (a 404 for one they cannot see, a 403 for one
    they only annotate, as the project's other routes)."""

    serializer_class = ItemSerializer
    queryset = Item.objects.none()  # the schema's id type; rows come from browse_items

    @extend_schema(
        operation_id="projects_items_list",
        responses=ItemSerializer(many=True),
        parameters=[
            OpenApiParameter(
                "id", int, OpenApiParameter.PATH, description="A unique integer value identifying this project."
            ),
            OpenApiParameter("q", str, description="text in the external id or the item's text fields"),
            OpenApiParameter("stratum", str, description="key=value over strata columns or meta keys"),
            OpenApiParameter("status", str, enum=list(browse.ITEM_STATUSES), description="work status"),
            OpenApiParameter("decision", str, enum=list(browse.DECISIONS), description="curation decision"),
            OpenApiParameter("sample", str, description="in (any design sample), out (none) or a sample id"),
        ],
    )
    def get(self, request: Request, pk: str) -> Response:
        """The project's items, filtered as on the item browser page (all filters optional)."""
        project = managed_visible_project(request.user, pk)
        qs = browse.browse_items(project, browse.ItemFilters.from_query(request.query_params, project))
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(ItemSerializer(page, many=True).data)
