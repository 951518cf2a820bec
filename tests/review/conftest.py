"""The review room's fixtures: a decision service on a scratch review store of the test's own."""

from functools import partial

import pytest

from tests.helpers import service_on


@pytest.fixture
def scratch_service(tmp_path):
    """scratch_service(retain=None, **options): a decision service on a SQLite review store in the test's directory
    (`retain`: where delivery goes, e.g. a real gateway's retain; `options`: limits, second_review_share ...)."""
    return partial(service_on, tmp_path)
