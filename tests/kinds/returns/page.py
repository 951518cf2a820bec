"""The returns page: the generic case page (dashboard/app/kind_page.py) for this kind."""

from dashboard.app.kind_page import render
from tests.kinds.returns import RETURNS

render(RETURNS)
