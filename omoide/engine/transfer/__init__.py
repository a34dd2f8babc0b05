"""Export and import of a tenant's data, sealed (encrypted) or plain."""

from omoide.engine.transfer.service import TransferService

__all__ = ["TransferService"]
