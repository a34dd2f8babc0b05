"""The native API, version 1."""
