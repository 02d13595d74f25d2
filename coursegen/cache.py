"""What a course keeps on disk between runs of coursegen (what lives between builds of one run is
coursegen/session.py's)."""

CACHE_FOLDER = ".coursegen-cache"  # in the course root: git-ignored, safe to delete at any time
