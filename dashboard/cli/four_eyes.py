"""What `curate` and `vouch` share: the flags a step needs, who acts (acting.py), the review store, and a refusal said
as the CLI says them (a field to fix, or "not recorded" with the reason). Each command keeps what its steps do."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from dashboard.cli.acting import acting
from dashboard.cli.registry import input_error, open_gateway
from dashboard.settings import Role, Settings
from dashboard.store.identity import Actor

T = TypeVar("T")


@dataclass(frozen=True)
class Acting:
    settings: Settings
    gateway: Any  # HindsightGateway
    engine: Any  # sqlalchemy Engine of the review store
    who: Actor
    role: Role


def run_step(
    args: argparse.Namespace, needs: tuple[str, ...], act: Callable[[Acting], T], show: Callable[[T], None]
) -> int:
    """Check `needs` (flag names), then `act` as the person acting, then `show` what it returned; 0, or the exit code
    of a refusal. `act` raises the review store's InputError for a field to fix."""
    from dashboard.store.db import make_engine
    from dashboard.store.errors import InputError, NotAllowed, Refused

    for flag in needs:
        if getattr(args, flag) is None:
            return input_error(f"--{flag}", f"required by {args.step}")
    settings, gateway = open_gateway()
    who_acts, problem = acting(settings, args.by, args.token, name_flag="--by")
    if who_acts is None:
        gateway.close()
        return input_error(*problem)
    engine = make_engine(settings.store_url, settings.data_dir)
    try:
        done = act(Acting(settings, gateway, engine, *who_acts))
    except InputError as exc:
        return input_error(f"--{'by' if exc.field in ('proposer', 'lead') else exc.field}", exc.problem)
    except (NotAllowed, Refused) as exc:
        print(f"error: not recorded: {exc}", file=sys.stderr)
        return 1
    finally:
        gateway.close()
        engine.dispose()
    show(done)
    return 0
