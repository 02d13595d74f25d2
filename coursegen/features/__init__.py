"""Features beyond plain Markdown, each an extension of the one protocol (coursegen.extensions)."""
