"""Streamlit's scan for installed v2 components, done once per process (tests/conftest.py and tests/warm_app.py).

Each AppTest scans every installed distribution's metadata on its first run (a BidiComponentManager of its own), and so
does each app process as its runtime starts: ~0.4 s of CPU over this venv's ~250 distributions (py-spy: ~0.8 s of wall
time per AppTest under the suite's load), and the suite makes a few hundred of them. What is installed does not change
during a run, so the first scan's answer stands for the rest; each caller still registers every component it names."""

from __future__ import annotations

import functools


def scan_components_once() -> None:
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    if getattr(scan, "once", False):
        return
    found: list = []

    @functools.wraps(scan)
    def once(max_workers: int | None = None) -> list:
        if not found:
            found.append(scan(max_workers))
        return list(found[0])  # a list of its own for each caller, as the scan gives

    once.once = True
    manifest_scanner.scan_component_manifests = once
