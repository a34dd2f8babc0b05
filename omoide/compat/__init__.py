"""The compatibility interfaces' own logic, beside the native API: thin services over the
engine's services, speaking another project's vocabulary (WilmerAI discussions).

The routers in ``omoide.api.compat`` (JiuwenMemory, nexusAI, WilmerAI) call these and the
engine's services; nothing below ``omoide.compat`` knows these vocabularies.
"""
