"""Agreement report URLs. Mounted at the root by config/urls.py: ``path("", include("agreement.urls"))``.
All paths sit under ``projects/<id>/agreement/``, ``projects/<id>/report/``, ``projects/<id>/active/``
(active samples), ``api/projects/<id>/agreement/`` and
``api/projects/<id>/validation-report/``, which the
annotation app's pages and DRF router (``api/projects/<pk>/`` + its actions) do not claim."""

from django.urls import path

from . import active_views, api, views

urlpatterns = [
    path("projects/<int:project_id>/agreement/", views.report_page, name="agreement_report"),
    path("projects/<int:project_id>/report/", views.printable_report, name="printable_report"),
    path("projects/<int:project_id>/active/", active_views.active_page, name="active_sample"),
    path("projects/<int:project_id>/active/draw/", active_views.active_draw, name="active_draw"),
    path(
        "projects/<int:project_id>/active/<int:sample_id>/next/",
        active_views.active_next_round,
        name="active_next_round",
    ),
    path("projects/<int:project_id>/agreement/jobs/<int:job_id>/", views.report_job, name="agreement_job"),
    path("api/projects/<int:project_id>/agreement/", api.AgreementReportView.as_view(), name="api_agreement_report"),
    path(
        "api/projects/<int:project_id>/validation-report/",
        api.ValidationReportView.as_view(),
        name="api_validation_report",
    ),
]
