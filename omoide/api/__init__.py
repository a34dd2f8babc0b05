"""The HTTP interface: ``omoide.api.app.create_app`` and ``omoide.api.server.serve``."""
