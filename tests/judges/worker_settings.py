"""Settings for the kill-and-restart test's own worker: the project's settings with a short
Redis visibility timeout, so the broker hands an unacknowledged chunk (its worker was killed,
``acks_late``) to the next worker within seconds instead of the default hour, and a sweep for
such chunks every second: kombu looks for them every ``unacked_restore_interval`` (10 s) times
``unacked_restore_throttle`` (10) seconds by default, so the test waited 15 to 113 s for the
next sweep; and a killed worker that held the sweep's lock frees it after 10 s, not 300."""

from config.settings import *  # noqa: F403 - the project's settings, the broker's options changed

CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 4,
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
    "unacked_mutex_expire": 10,
}
