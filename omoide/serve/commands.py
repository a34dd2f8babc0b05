"""What the emulated products add to the command line: their formats of ``omoide import`` and
``omoide export`` (WilmerAI's discussion files). The CLI mounts them with its plumbing."""

from omoide.compat.wilmer.commands import Shell
from omoide.compat.wilmer.commands import mount as mount_commands

__all__ = ["Shell", "mount_commands"]
