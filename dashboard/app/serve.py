"""How the served app is warmed before its first reviewer (`prepare`, which streamlit_app.py's lifespan runs), and
`python -m dashboard.app.serve [streamlit options]`: `streamlit run dashboard/app/streamlit_app.py` after a check of
the settings (the checks a start must pass are in startup_checks.py).

Streamlit imports a page's modules on the first script run, so the first reviewer after a start would pay
Python's imports of the app (pandas, the Hindsight client, SQLAlchemy, plotly: about 4 s of CPU here).
This imports them before the server answers, then hands over to Streamlit's own command line.

Streamlit also runs a full garbage collection after every script run (`runner.postScriptGC`). On the warmed
heap (~250k objects: pandas, plotly, SQLAlchemy, the client) each one took 170-270 ms here, on every key
press, and it holds the GIL, so the run's last messages waited for it. The imported modules live as long as
the process, so they are frozen out of the collector's scans (`gc.freeze`); each collection then sees only
what the sessions made. The queue files are read before that too (`read_queues`), for the same two reasons.
"""

from __future__ import annotations

import gc
import importlib
import logging
import pkgutil
import sys
import time
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

import components
import dashboard.app

logger = logging.getLogger(__name__)
MAIN = Path(__file__).with_name("streamlit_app.py")  # main.py's pages and the API beside them
PAGES = "dashboard.app.views."  # a page draws itself when imported: Streamlit runs them, never this
SKIP = {
    "dashboard.app.main",
    "dashboard.app.serve",
    "dashboard.app.streamlit_app",
}  # the entry point runs the app; this is the launcher


def import_app_modules() -> list[str]:
    """Import every module the pages build on (components, the app room, each kind's pages package: not the pages
    themselves); their names."""
    names = []
    for package in (components, dashboard.app):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.startswith(PAGES) and module.name not in SKIP:
                importlib.import_module(module.name)
                names.append(module.name)
    for kind in _kinds():
        if getattr(kind, "pages_package", None) is None:
            continue
        package, scripts = importlib.import_module(kind.pages_package), set(_scripts(kind))
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if Path(module.module_finder.path, module.name.rpartition(".")[2] + ".py") not in scripts:
                importlib.import_module(module.name)
                names.append(module.name)
    return names


def _kinds():
    from dashboard.kinds import configured, registered
    from dashboard.settings import load_settings

    return registered(configured(load_settings()))


def _scripts(kind) -> list[Path]:
    """A kind's page scripts, absolute: its queue page and the pages beside it."""
    scripts = [kind.page, *(page.script for page in getattr(kind, "more_pages", ()))]
    return [s if s.is_absolute() else MAIN.parent / s for s in scripts]


def read_queues() -> None:
    """The configured queue files parsed into the models `load_rows` keeps for the pages: a queue of 100,000
    exceptions is ~2 s of validation and a million objects, which the first reviewer would wait for and every
    run's collection would scan; then their ids, and what each kind's pages work out for their first screen (its
    pages package's `warm`). A file that does not load is left to its page, which says why."""
    from dashboard.app.kept_while_same import ids_of
    from dashboard.kinds import cases_of, configured, registered
    from dashboard.queue_files import QueueFileError
    from dashboard.settings import load_settings

    settings = configured(load_settings())
    for kind in registered(settings):
        try:
            rows = cases_of(settings, kind)
        except QueueFileError:
            continue
        ids_of(rows)
        pages = getattr(kind, "pages_package", None)
        if rows and pages is not None and hasattr(warm_pages := importlib.import_module(pages), "warm"):
            warm_pages.warm(rows)


def warm() -> list[str]:
    """The app's modules and Streamlit's server imported, the queues read, then all of it frozen out of the
    garbage collector's scans."""
    names = import_app_modules()
    import streamlit.web.bootstrap  # noqa: F401  (the server's own modules, imported by `cli.main` anyway)

    read_queues()
    gc.freeze()
    return names


def compile_pages() -> int:
    """Every page script compiled into Streamlit's script cache, as each page's first run in the process would (its
    magic pass walks the syntax tree: 10-120 ms a page here, the Overview's the most, paid by whoever opened it first).
    How many; none when no Streamlit runtime serves this process (a launcher's warm-up before its forks)."""
    from streamlit.runtime import Runtime

    cache = getattr(Runtime.instance(), "_script_cache", None) if Runtime.exists() else None
    if cache is None:
        return 0
    scripts = [MAIN.with_name("main.py"), *sorted(MAIN.with_name("views").glob("*.py"))]
    scripts += [script for kind in _kinds() for script in _scripts(kind)]
    for script in scripts:
        cache.get_bytecode(str(script))
    return len(scripts)


def read_review_store() -> None:
    """Each queue's decision states, held cases and flags counts read into the store objects every session uses
    (`st.cache_resource` is per process), before the server answers: over 1,000,000 decisions that first read is
    ~1.4 s the first reviewer would wait for, and the flags of 100,000 cases ~0.5 s of the first Overview. A store that
    cannot be read now is left to the pages, which say why."""
    from dashboard.app import resources

    outside_a_run = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    level = outside_a_run.level
    outside_a_run.setLevel(logging.ERROR)  # "missing ScriptRunContext": expected here, before any session
    try:
        settings = resources.settings()
        for kind in resources.kinds():
            bank = settings.queue(kind.key).bank
            resources.outbox().decision_states(bank, kind.name)
            resources.casework().read_flag_counts(bank, kind.name)
            resources.decisions().held_cases(bank, kind.name)
    except (SQLAlchemyError, OSError) as exc:
        logger.warning("the review store could not be read before serving: %s", exc)
    finally:
        outside_a_run.setLevel(level)


def start_delivery() -> None:
    """This process's delivery worker (docs/webhooks.md), started before any session: decisions recorded by a command
    or another instance reach Hindsight and the webhooks whether or not anyone opens a page. Its webhook position is
    held first (dashboard.kinds.hold_webhook_position)."""
    from dashboard.app import resources
    from dashboard.kinds import hold_webhook_position

    outside_a_run = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    level = outside_a_run.level
    outside_a_run.setLevel(logging.ERROR)  # "missing ScriptRunContext": expected here, before any session
    try:
        hold_webhook_position(resources.settings(), resources.outbox().engine)
        resources.worker()
    except (SQLAlchemyError, OSError) as exc:  # the first page run starts it again, and says what is wrong
        logger.warning("the delivery worker could not start before serving: %s", exc)
    finally:
        outside_a_run.setLevel(level)


def prepare() -> float:
    """Everything a first reviewer would otherwise wait for, then frozen out of the collector's scans: the app's modules,
    the queues, this process's review store. Seconds it took. The served app's lifespan runs it (streamlit_app.py), so
    `streamlit run dashboard/app/streamlit_app.py` is warmed like this launcher; what was done already (a warmed fork's
    imports) is not done again."""
    started = time.perf_counter()
    warm()
    compile_pages()
    read_review_store()  # not in warm(): the tests' launcher warms once, then each fork reads its own store
    gc.freeze()  # what it read too (the first states of a 100,000-case queue are ~100,000 objects)
    return time.perf_counter() - started


def main(argv: list[str]) -> None:
    """`streamlit run dashboard/app/streamlit_app.py`, after checking the settings: its lifespan warms it."""
    from streamlit.web import cli

    from dashboard.app.startup_checks import settings_or_exit

    settings_or_exit()

    sys.argv = ["streamlit", "run", str(MAIN), *argv]
    cli.main()


if __name__ == "__main__":
    main(sys.argv[1:])
