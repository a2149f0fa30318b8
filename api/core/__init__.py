"""Settings of the API process."""
