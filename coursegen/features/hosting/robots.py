"""Hosting files: robots.txt, pointing crawlers at the sitemap when the site knows its address."""

from __future__ import annotations

ROBOTS_NAME = "robots.txt"


def robots_txt(base_url: str) -> bytes:
    """Return robots.txt allowing every page, with the sitemap's address when `base_url` is set."""
    lines = ["User-agent: *", "Allow: /"]
    if base_url:
        lines.append(f"Sitemap: {base_url}sitemap.xml")
    return ("\n".join(lines) + "\n").encode()


def add_files(course, root, assets, problems) -> None:
    """Add robots.txt at the site root (it only counts there: on a user site or a custom domain)."""
    assets.files[ROBOTS_NAME] = robots_txt(course.config.base_url)
