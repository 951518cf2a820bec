from dashboard import processes
from dashboard.cli import main

processes.stop_children_on_signals()  # a command stopped by SIGTERM or Ctrl-C stops the servers it started
raise SystemExit(main())
