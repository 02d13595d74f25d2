"""`{calc}`: numbers computed by the course's own Python at build time."""
