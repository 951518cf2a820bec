"""The disputes page: the generic case page (dashboard/app/kind_page.py) for this kind."""

from dashboard.app.kind_page import render
from tests.kinds.disputes import DISPUTES

render(DISPUTES)
