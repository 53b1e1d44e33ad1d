import pytest

from tests.annotation.conftest import media_root, researcher  # noqa: F401  (shared fixtures)
from tests.annotation.factories import make_user


@pytest.fixture
def annotators(db):
    return [make_user(f"ann{i}") for i in range(1, 5)]
