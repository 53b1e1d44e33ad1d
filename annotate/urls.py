"""The annotator loop's pages and API, mounted at the root by config/urls.py."""

from django.urls import include, path, re_path
from rest_framework.routers import DefaultRouter

from . import api, views

router = DefaultRouter()
router.register("assignments", api.AssignmentViewSet, basename="api-assignment")

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/<int:project_id>/queue/", views.queue, name="queue"),
    path("projects/<int:project_id>/next/", views.next_item, name="next_item"),
    path("a/<int:assignment_id>/", views.annotate, name="annotate"),
    path("a/<int:assignment_id>/skip/", views.skip, name="skip"),
    # the project router's own pattern for a project id (any segment; a bad one is a 404)
    re_path(r"^api/projects/(?P<pk>[^/.]+)/next/$", api.NextAssignmentView.as_view(), name="api-project-next"),
    path("api/", include(router.urls)),
]
