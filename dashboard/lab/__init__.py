"""The fusion lab: labelled evidence sets and A/B comparisons built from the domain queues."""
