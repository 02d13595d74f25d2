"""Site search: a Pagefind index of every published page."""
