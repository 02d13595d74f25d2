"""Site search: an index of every published page's sections, fetched a few files per query."""
