"""The benches: what the product costs, measured against a real Hindsight, a real app and Chromium, printed as
figures side by side (`python -m benches <bench>`, docs/performance.md). Beside the product, not in it: the product
never imports this package; the benches use the product's own command-line plumbing and app process."""
