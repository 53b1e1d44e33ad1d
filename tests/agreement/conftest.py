import os

import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


@pytest.fixture(scope="session")
def django_ready():
    import django

    django.setup()
    return True
