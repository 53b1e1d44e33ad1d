import os
from collections.abc import Callable
from pathlib import Path

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("hv")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The filesystem broker (the embedded default) needs its folders before anything is sent.
if str(app.conf.broker_url or "").startswith("filesystem"):
    for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
        folder = (app.conf.broker_transport_options or {}).get(key)
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)


def send_or_fail(send: Callable[[], object], fail: Callable[[str], None]) -> bool:
    """Hand a task to the broker. If the broker cannot take it, record why on the job (through
    ``fail``) instead of leaving the job queued for ever."""
    try:
        send()
    except Exception as exc:  # noqa: BLE001 - kombu, redis and OS errors all mean "not queued"
        fail(f"the task queue could not be reached ({exc.__class__.__name__}: {exc}); "
             "check that the broker and a worker are running, then try again")
        return False
    return True
