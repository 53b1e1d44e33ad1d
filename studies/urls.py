from django.urls import path

from . import crowd_views, plan_views, views

urlpatterns = [
    path("projects/<int:project_id>/design/", views.design, name="design"),
    path("projects/<int:project_id>/samples/preview/", views.sample_preview, name="sample_preview"),
    path("projects/<int:project_id>/samples/new/", views.sample_create, name="sample_create"),
    path("projects/<int:project_id>/samples/<int:sample_id>/", views.sample_detail, name="sample_detail"),
    path(
        "projects/<int:project_id>/samples/<int:sample_id>/plan-preview/",
        plan_views.plan_preview,
        name="plan_preview",
    ),
    path("projects/<int:project_id>/plans/<int:plan_id>/", views.plan_detail, name="plan_detail"),
    path("projects/<int:project_id>/plans/<int:plan_id>/hand/", views.plan_hand_assign, name="plan_hand_assign"),
    path("projects/<int:project_id>/plans/<int:plan_id>/reassign/", views.plan_reassign, name="plan_reassign"),
    path("projects/<int:project_id>/plans/<int:plan_id>/close/", views.plan_close, name="plan_close"),
    path("projects/<int:project_id>/plans/<int:plan_id>/expire/", views.plan_expire_leases, name="plan_expire"),
    path("projects/<int:project_id>/plans/<int:plan_id>/delete/", plan_views.plan_delete, name="plan_delete"),
    path("projects/<int:project_id>/dashboard/", views.dashboard_page, name="dashboard"),
    path("projects/<int:project_id>/dashboard/<str:table>.csv", views.dashboard_csv, name="dashboard_csv"),
    path("projects/<int:project_id>/qc/", views.qc_settings, name="qc_settings"),
    path("projects/<int:project_id>/annotators/<int:rater_id>/pause/", views.annotator_pause, name="annotator_pause"),
    path(
        "projects/<int:project_id>/annotators/<int:rater_id>/resume/", views.annotator_resume, name="annotator_resume"
    ),
    path("projects/<int:project_id>/studies/new/", views.study_create, name="study_create"),
    path("projects/<int:project_id>/studies/<int:study_id>/toggle/", views.study_toggle, name="study_toggle"),
    path("p/<str:token>/", crowd_views.entry, name="crowd_entry"),
    path("p/<str:token>/work/", crowd_views.work, name="crowd_work"),
    path("p/<str:token>/done/", crowd_views.done, name="crowd_done"),
]
