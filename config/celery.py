import os
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
