"""Dependencies, declared once as ``Annotated`` aliases: the memory and the
caller's tenant."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from omoide.config import TenantKey
from omoide.errors import Forbidden, NotFound
from omoide.memory import Memory
from omoide.types import DEFAULT_ID, Scope
from omoide.validate import check_ids


def get_memory(request: Request) -> Memory:
    memory: Memory = request.app.state.memory
    return memory


class Tenancy:
    """Resolves the tenant a request names against the tenant its key is bound to.

    With the full-access key (or no key configured) an omitted id means ``"default"``. With a
    bound key an omitted ``user_id`` (or ``scope_id``, when the key fixes one) means the bound
    one, and naming any other tenant is ``Forbidden``.
    """

    def __init__(self, bound: TenantKey | None) -> None:
        self.bound = bound

    def scope(self, user_id: str | None, scope_id: str | None) -> Scope:
        check_ids(user_id, scope_id)
        bound = self.bound
        if bound is None:
            return Scope(user_id=user_id or DEFAULT_ID, scope_id=scope_id or DEFAULT_ID)
        if user_id is not None and user_id != bound.user_id:
            raise Forbidden(f"this API key cannot access user {user_id!r}", user_id=user_id)
        if bound.scope_id is not None and scope_id is not None and scope_id != bound.scope_id:
            raise Forbidden(f"this API key cannot access scope {scope_id!r}", scope_id=scope_id)
        return Scope(user_id=bound.user_id, scope_id=scope_id or bound.scope_id or DEFAULT_ID)

    def memory_scope(
        self, engine: Memory, memory_id: str, user_id: str | None, scope_id: str | None
    ) -> Scope:
        """The tenant of an operation on one memory. Naming a tenant works as ``scope``; naming
        none, the id names its own when the key may reach it, else the tenant
        ``scope`` gives, where the id is then not found: a bound key gets 404 for another
        tenant's id, as for an id nobody has."""
        fallback = self.scope(user_id, scope_id)
        if user_id is not None or scope_id is not None:
            return fallback
        try:
            owner = engine.owner(memory_id)
        except NotFound:
            return fallback
        bound = self.bound
        if bound is not None and (
            owner.user_id != bound.user_id
            or (bound.scope_id is not None and owner.scope_id != bound.scope_id)
        ):
            return fallback
        return owner

    def optional_scope(self, user_id: str | None, scope_id: str | None) -> Scope | None:
        """``None`` (every tenant) only for a full-access caller who names no tenant."""
        if self.bound is None and user_id is None and scope_id is None:
            return None
        return self.scope(user_id, scope_id)


def get_tenancy(request: Request) -> Tenancy:
    return Tenancy(getattr(request.state, "tenant", None))


MemoryDep = Annotated[Memory, Depends(get_memory)]
TenancyDep = Annotated[Tenancy, Depends(get_tenancy)]
