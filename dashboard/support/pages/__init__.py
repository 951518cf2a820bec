"""Support's pages: the ticket queue and case page, the migration to tags, and the Streamlit helpers only they use. The domain beside this package never imports it (nor Streamlit): the pages sit on top of it."""


def warm(tickets) -> None:
    """Before the app serves: the customer directory the ticket page reads (a file that does not load is left to the
    page, which says why)."""
    from dashboard.queue_files import QueueFileError, shared_rows
    from dashboard.settings import load_settings
    from dashboard.support.models import Customer

    try:
        shared_rows(load_settings().customers_file, Customer, "name")
    except QueueFileError:
        pass
