"""The reference agents (the seeds' finance and support agents, deterministic, real recalls) and the
audit of what they recalled: Hindsight's audit log synced into the review store, then-vs-now, incidents."""
