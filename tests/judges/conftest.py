import pytest

from tests.annotation.factories import make_user


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return settings.MEDIA_ROOT


@pytest.fixture
def researcher(db):
    return make_user("res", researcher=True)


@pytest.fixture
def annotator(db):
    return make_user("ann1")
