"""The store's ports: one small Protocol pair per aggregate. See ``omoide.store.protocol``."""
