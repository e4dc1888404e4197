"""accounting."""
