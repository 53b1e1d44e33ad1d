"""The agreement report over the API, as JSON or CSV (``?format=json|csv``), and the protocol's
validation tables (``validation-report/?format=json|markdown|latex|csv``).

Both answer from the stored report (``services.report_for``): 200 with ``result`` (and
``computed_at``) while it is current; 202 with the status and progress while a worker computes
it, the previous report, if any, under ``last_good`` (``"current": false``), never as ``result``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import managed_project_or_403
from core import csvsafe
from hvstats import tables
from hvstats.notes import table_notes

from . import services
from .models import AgreementReport
from .services import ReportParams

#: the columns a status or error body leads with in CSV (others follow in their order)
STATUS_KEYS = ("status", "progress", "report_id", "message", "detail", "code")


#: "Does the benchmark's conclusion hold?": the parameters both report endpoints take
SYSTEM_PARAMETER = OpenApiParameter(
    "system",
    str,
    description="the item stratum whose values are the systems for 'Does the benchmark's conclusion hold?' "
    "(default: the preset's, e.g. generator)",
)
FINDING_PARAMETER = OpenApiParameter(
    "finding",
    str,
    description="a comparison of item groups, 'column: A, B vs C' (default: the preset's findings)",
)


class CSVRenderer(BaseRenderer):
    """One row per coefficient (see ``services.report_rows``); status rows while pending."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        if isinstance(data, dict) and data.get("result"):
            return services.report_csv(data["result"]).encode()
        # a status while pending, or an error body (its text may echo the query: issue 37, M2)
        if isinstance(data, dict):
            # pending or failed: no result yet, and the last good one is the JSON's only
            data = {k: v for k, v in data.items() if k not in ("result", "last_good")}
        return csvsafe.record_text(data, STATUS_KEYS).encode()


def _body(answer: dict[str, Any] | AgreementReport) -> tuple[dict[str, Any], int]:
    """The status body of a stored report: ``result`` only when it is done and current;
    while it updates (202), ``last_good`` holds the previous report (``report_id``,
    ``computed_at``, ``result``) with ``"current": false``, never in ``result``."""
    if isinstance(answer, AgreementReport):
        done = answer.status == "done"
        body = {
            "status": answer.status,
            "progress": answer.progress,
            "report_id": answer.id,
            "message": answer.message,
            "computed_at": answer.finished_at.isoformat() if done and answer.finished_at else None,
            "result": answer.result if done else None,
        }
        last_good = getattr(answer, "last_good", None)
        if answer.is_pending and last_good is not None:
            body["last_good"] = {
                "report_id": last_good.id,
                "computed_at": last_good.finished_at.isoformat() if last_good.finished_at else None,
                "current": False,
                "result": last_good.result,
            }
        return body, {"done": 200, "failed": 500}.get(answer.status, 202)
    return {"status": "done", "progress": 1.0, "report_id": None, "message": "", "result": answer}, 200


class AgreementReportView(APIView):
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter("field", str, description="one field (default: all)"),
            OpenApiParameter("by", str, description="stratum column (country, region, generator, ...)"),
            OpenApiParameter("bootstrap", int, description="item resamples for 95% CIs (default 1000)"),
            OpenApiParameter("seed", int),
            OpenApiParameter(
                "epsilon",
                float,
                description="alt-test margin, 0 <= epsilon < 1 (default 0.2; the paper's guidance: 0.2 expert, "
                "0.15 skilled, 0.1 crowd annotators)",
            ),
            OpenApiParameter("half_width", float, description="CI half-width for the budget advice (optional, > 0)"),
            OpenApiParameter(
                "joint",
                bool,
                description="also one alt-test per judge over all fields (with by: all strata), one FDR correction",
            ),
            SYSTEM_PARAMETER,
            FINDING_PARAMETER,
            OpenApiParameter("format", str, enum=["json", "csv"]),
        ],
        responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, project_id: int) -> Response:
        """The project's agreement report (researchers and admins of the project only)."""
        project = managed_project_or_403(request.user, project_id)
        q = request.query_params
        # a bad parameter is a DomainError: core.api.exception_handler answers 400 with why
        params = ReportParams.from_query(q)
        answer = services.report_for(project=project, params=params, user=request.user)
        body, code = _body(answer)
        headers = {}
        if request.accepted_renderer.format == "csv":
            headers["Content-Disposition"] = f'attachment; filename="agreement-project-{project.id}.csv"'
        return Response(body, status=code, headers=headers)


# ------------------------------------------------------------------------------ validation tables
class _TablesRenderer(BaseRenderer):
    """The protocol's validation tables as text (``hvstats.tables.render``); while a large
    project's report is pending, or on an error, one line of status."""

    charset = "utf-8"

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        if isinstance(data, dict) and data.get("tables") is not None and data.get("status") == "done":
            return tables.render(
                [tables.Table.from_dict(t) for t in data["tables"]], self.format, csv_writer=csvsafe.dict_writer
            ).encode()
        if isinstance(data, dict):
            return (
                "; ".join(f"{k}: {data[k]}" for k in ("status", "progress", "report_id", "detail") if k in data) + "\n"
            ).encode()
        return str(data).encode()


class MarkdownTablesRenderer(_TablesRenderer):
    media_type = "text/markdown"
    format = "markdown"


class LatexTablesRenderer(_TablesRenderer):
    media_type = "application/x-latex"
    format = "latex"


class CSVTablesRenderer(_TablesRenderer):
    media_type = "text/csv"
    format = "csv"

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        if isinstance(data, dict) and data.get("tables") is not None and data.get("status") == "done":
            return super().render(data, accepted_media_type, renderer_context)
        # the status line, or an error body, as CSV through the one writer: its text may echo
        # what the client sent (issue 37, M2)
        return csvsafe.record_text(data, STATUS_KEYS).encode()


EXTENSIONS = {"markdown": "md", "latex": "tex", "csv": "csv"}


class ValidationReportView(APIView):
    renderer_classes = [JSONRenderer, MarkdownTablesRenderer, LatexTablesRenderer, CSVTablesRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter("bootstrap", int, description="item resamples for 95% CIs (default 1000)"),
            OpenApiParameter("seed", int),
            OpenApiParameter(
                "epsilon",
                float,
                description="alt-test margin of the verdicts table, 0 <= epsilon < 1 (default 0.2; 0.15 skilled, 0.1 crowd)",
            ),
            OpenApiParameter(
                "min_rater_items",
                int,
                description="least rated items for a rater to enter the human agreement ceilings and slots "
                "(default 30, the alt-test's minimum; 0 = every rater)",
            ),
            SYSTEM_PARAMETER,
            FINDING_PARAMETER,
            OpenApiParameter("format", str, enum=["json", "markdown", "latex", "csv"]),
        ],
        responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, project_id: int) -> Response:
        """The protocol's validation tables (the paper's tables from the stored ratings), as JSON,
        Markdown, LaTeX (booktabs) or CSV; researchers and admins of the project only."""
        project = managed_project_or_403(request.user, project_id)
        q = request.query_params
        params = ReportParams.parse(
            bootstrap=q.get("bootstrap"),
            seed=q.get("seed"),
            epsilon=q.get("epsilon"),
            min_rater_items=q.get("min_rater_items"),
            system=q.get("system"),
            finding=q.get("finding"),
        )
        # the tables, the judges' answers and the active estimates all come from the one stored
        # report for these settings (services.report_for), never recomputed per request
        answer = services.report_for(project=project, params=params, user=request.user)
        body, code = _body(answer)
        result = body.pop("result", None) or {}
        body.pop("last_good", None)  # the tables are served only from a current report
        body["tables"] = result.get("validation", []) if code == 200 else None
        body["params"] = {
            "bootstrap": params.bootstrap,
            "seed": params.seed,
            "epsilon": params.epsilon,
            "min_rater_items": params.min_rater_items,
            "system": params.system,
            "finding": params.finding,
        }
        if code == 200:
            # one answer per judge (hvstats.answers), as the judge-answers table says it
            body["answers"] = result.get("answers", [])
        if code == 200 and "active" in result:
            body["active"] = result["active"]  # the active sample's estimates (issue 27)
        if code == 200:
            # "Does the benchmark's conclusion hold?" as data (its tables are the conclusions-* above),
            # from the same stored report
            body["conclusions"] = result.get("conclusions")
            # every degenerate or small input carries a note in every output (issue 34): the
            # tables' notes and the active series' as notes of hvstats.notes, each with its table
            body["notes"] = table_notes(
                [tables.Table.from_dict(t) for t in body["tables"]], (result.get("active") or {}).get("series", [])
            )
        headers = {}
        fmt = request.accepted_renderer.format
        if fmt in EXTENSIONS and code == 200:
            headers["Content-Disposition"] = f'attachment; filename="validation-project-{project.id}.{EXTENSIONS[fmt]}"'
        return Response(body, status=code, headers=headers)
