"""sample."""
