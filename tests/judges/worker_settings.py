"""Settings for the kill-and-restart test's own worker: the project's settings with a short
Redis visibility timeout, so the broker hands an unacknowledged chunk (its worker was killed,
``acks_late``) to the next worker within seconds instead of the default hour."""

from config.settings import *  # noqa: F403 - the project's settings, one value changed

CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 4}
