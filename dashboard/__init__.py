"""Recall Review: a reviewer dashboard for agent memory recalled from Hindsight."""
