"""Widgets: build-time results baked into the page, then live in Pyodide."""
