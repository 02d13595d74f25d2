"""Runnable code cells in Markdown lessons (MyST-NB syntax), their outputs baked at build time."""
