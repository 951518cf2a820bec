from benches import api, audit, browser, recall, scale, team, webhooks  # noqa: F401  (register their commands)
from benches.registry import main
from dashboard import processes

processes.stop_children_on_signals()  # a bench stopped by SIGTERM or Ctrl-C stops the servers it started
raise SystemExit(main())
