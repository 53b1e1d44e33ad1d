# the human side's fixtures (a temporary MEDIA_ROOT, fast password hashing, a researcher and
# two annotators), shared with tests/annotation rather than restated
from tests.annotation.conftest import annotators, media_root, researcher  # noqa: F401
