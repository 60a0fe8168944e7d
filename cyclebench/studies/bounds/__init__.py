"""The bounds-checking study: from Intel MPX to what replaced it (``cyclebench study bounds``)."""
