"""The development server: rebuild on save, live reload."""
