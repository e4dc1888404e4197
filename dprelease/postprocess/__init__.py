"""postprocess."""
