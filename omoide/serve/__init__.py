"""The composition root: the FastAPI app built from the routers the settings enable; ``serve``."""
