from django.urls import include, path
from rest_framework.routers import DefaultRouter

from . import api, crowd_views, design_views, views

router = DefaultRouter()
router.register("projects", api.ProjectViewSet, basename="api-project")
router.register("imports", api.ImportJobViewSet, basename="api-import")
router.register("assignments", api.AssignmentViewSet, basename="api-assignment")

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/new/", views.project_create, name="project_create"),
    path("projects/<int:project_id>/", views.project_detail, name="project_detail"),
    path("projects/<int:project_id>/import/", views.project_import, name="project_import"),
    path("projects/<int:project_id>/members/", views.project_members, name="project_members"),
    path("projects/<int:project_id>/status/", views.project_status, name="project_status"),
    path("projects/<int:project_id>/queue/", views.queue, name="queue"),
    path("projects/<int:project_id>/next/", views.next_item, name="next_item"),
    path("projects/<int:project_id>/design/", design_views.design, name="design"),
    path("projects/<int:project_id>/samples/<int:sample_id>/", design_views.sample_detail, name="sample_detail"),
    path("projects/<int:project_id>/plans/<int:plan_id>/", design_views.plan_detail, name="plan_detail"),
    path("projects/<int:project_id>/dashboard/", design_views.dashboard, name="dashboard"),
    path("projects/<int:project_id>/dashboard/<str:table>.csv", design_views.dashboard_csv, name="dashboard_csv"),
    path("projects/<int:project_id>/studies/<int:study_id>/toggle/", design_views.study_toggle, name="study_toggle"),
    path("p/<str:token>/", crowd_views.entry, name="crowd_entry"),
    path("p/<str:token>/work/", crowd_views.work, name="crowd_work"),
    path("p/<str:token>/done/", crowd_views.done, name="crowd_done"),
    path("imports/<int:job_id>/", views.import_detail, name="import_detail"),
    path("a/<int:assignment_id>/", views.annotate, name="annotate"),
    path("a/<int:assignment_id>/skip/", views.skip, name="skip"),
    path("assets/<str:sha256>/", views.asset, name="asset"),
    path("assets/<str:sha256>/thumb/", views.asset, {"thumb": True}, name="asset_thumb"),
    path("api/", include(router.urls)),
]
