from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from accounts.views import LoginView
from config.health import healthz
from core.security import admin_login

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/login/", admin_login, name="admin_login"),
    path("admin/", admin.site.urls),
    path("login/", LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="schema", template_name="api/swagger_ui.html"),
        name="swagger-ui",
    ),
    path("", include("annotation.urls")),
    path("", include("annotate.urls")),
    path("", include("studies.urls")),
    path("", include("agreement.urls")),
    path("", include("judges.urls")),
    path("", include("curation.urls")),
    path("", include("accounts.urls")),
]
