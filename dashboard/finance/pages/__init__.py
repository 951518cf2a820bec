"""Finance's pages: the exception queue and case page, and the Streamlit helpers only they use. The domain beside this package never imports it (nor Streamlit): the pages sit on top of it."""


def warm(cases) -> None:
    """Before the app serves: the exception queue as its page first shows it (sorted, unfiltered), and its vendors."""
    from dashboard.finance.pages.shown_queue import shown_queue, vendor_choices

    shown_queue(cases, {}, {}, {})  # no filter reads the states
    vendor_choices(cases)
