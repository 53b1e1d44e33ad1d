import pytest

from tests.annotation.conftest import media_root, researcher  # noqa: F401  (shared fixtures)
from tests.annotation.factories import make_user


@pytest.fixture
def annotator(db):
    return make_user("ann1")
