"""The HTTP interface: ``omoide.serve.app.create_app`` and ``omoide.serve.server.serve``."""
