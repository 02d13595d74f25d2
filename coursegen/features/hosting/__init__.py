"""Hosting files: robots.txt, and the offline copy (service worker, self-hosted Pyodide)."""
