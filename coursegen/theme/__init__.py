"""The theme: the packaged default and a course's own files over it, and its settings."""
