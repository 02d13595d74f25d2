"""Questions and exercises: the same blocks in lessons and reviews."""
