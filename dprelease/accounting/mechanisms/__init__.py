"""accounting/mechanisms."""
