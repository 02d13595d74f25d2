"""Commands that write sources for the author: `init` and `new`."""
