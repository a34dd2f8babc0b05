"""Which tenant tables a SQL statement reads or writes without routing them to one tenant.

Citus sends a statement to one shard when every distributed table it touches is filtered by an
equality on the distribution column (``user_id``), or joined on it to such a table. This reads
statements with PostgreSQL's own parser (pglast) and reports each reference to a tenant table
that is not: neither ``<table>.user_id = <value>`` (a parameter, a constant, a cast of one) in
its query block, nor ``<table>.user_id = <other>.user_id`` with ``<other>`` routed (a table of
the same block or of an enclosing one, or a subquery or CTE, whose own tables are checked in
turn). An ``INSERT`` is routed when it names ``user_id`` among its columns (each row goes to its
tenant's shard); its ``SELECT``, if any, is checked as any other.

Scoping is by query block (a ``SELECT``, ``UPDATE`` or ``DELETE`` and its ``FROM``): an alias
filtered in one CTE does not route the same alias in another.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pglast import ast, parse_sql
from pglast.enums import A_Expr_Kind

_VALUE = (ast.ParamRef, ast.A_Const)


@dataclass
class Block:
    """One query block: its tables (alias -> table name), other sources (subqueries, CTEs,
    functions), and the equalities of its ``WHERE`` and ``JOIN ... ON``."""

    tables: dict[str, str] = field(default_factory=dict)
    derived: set[str] = field(default_factory=set)
    equalities: list[tuple[Any, Any]] = field(default_factory=list)
    single: str | None = None  # the one table an unqualified column names


def unrouted(sql: str, tenant_tables: set[str]) -> list[str]:
    """The tenant tables ``sql`` touches without a route to one tenant (empty: routable)."""
    found: list[str] = []
    for raw in parse_sql(sql):
        ctes = {c.ctename for c in _all(raw.stmt, ast.CommonTableExpr)}
        _statement(raw.stmt, tenant_tables - ctes, ctes, found)
    return found


def _all(node: Any, kind: type) -> Iterator[Any]:
    if isinstance(node, kind):
        yield node
    for child in _children(node):
        yield from _all(child, kind)


def _statement(node: Any, tenants: set[str], outer: set[str], found: list[str]) -> None:
    """Check ``node`` (a statement or a query block) and every block nested in it."""
    if isinstance(node, ast.InsertStmt):
        table = node.relation.relname
        columns = {c.name for c in node.cols or ()}
        if table in tenants and "user_id" not in columns:
            found.append(f"INSERT INTO {table} without user_id")
        if node.selectStmt is not None:
            _statement(node.selectStmt, tenants, outer, found)
        _ctes(node.withClause, tenants, outer, found)
        return
    if isinstance(node, ast.SelectStmt) and node.op and node.op.name != "SETOP_NONE":
        for part in (node.larg, node.rarg):
            _statement(part, tenants, outer, found)
        _ctes(node.withClause, tenants, outer, found)
        return
    if not isinstance(node, ast.SelectStmt | ast.UpdateStmt | ast.DeleteStmt):
        for child in _children(node):  # EXPLAIN, CREATE TABLE AS, ...
            if isinstance(child, ast.Node) and _is_query(child):
                _statement(child, tenants, outer, found)
        return
    _ctes(node.withClause, tenants, outer, found)
    block = _block(node)
    routed = _routed(block, outer)
    for alias, table in block.tables.items():
        if table in tenants and alias not in routed:
            found.append(f"{table} {alias}")
    for nested in _nested(node):
        _statement(nested, tenants, routed | outer, found)


def _is_query(node: Any) -> bool:
    return isinstance(node, ast.SelectStmt | ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt)


def _ctes(with_clause: Any, tenants: set[str], outer: set[str], found: list[str]) -> None:
    for cte in (with_clause.ctes if with_clause else None) or ():
        _statement(cte.ctequery, tenants, outer, found)


def _block(node: Any) -> Block:
    block = Block()
    sources: list[Any] = []
    if isinstance(node, ast.UpdateStmt | ast.DeleteStmt):
        sources.append(node.relation)
    sources += list(getattr(node, "fromClause", None) or ())
    sources += list(getattr(node, "usingClause", None) or ())
    quals: list[Any] = [node.whereClause]
    for source in sources:
        _sources(source, block, quals)
    for qual in quals:
        _equalities(qual, block.equalities)
    if len(block.tables) + len(block.derived) == 1 and block.tables:
        block.single = next(iter(block.tables))
    return block


def _sources(node: Any, block: Block, quals: list[Any]) -> None:
    if isinstance(node, ast.RangeVar):
        alias = node.alias.aliasname if node.alias else node.relname
        block.tables[alias] = node.relname
    elif isinstance(node, ast.JoinExpr):
        _sources(node.larg, block, quals)
        _sources(node.rarg, block, quals)
        quals.append(node.quals)
    elif isinstance(node, ast.RangeSubselect) and node.alias:
        block.derived.add(node.alias.aliasname)  # its own tables are checked in turn


def _equalities(node: Any, out: list[tuple[Any, Any]]) -> None:
    """``a = b`` pairs of an ``AND`` tree (an ``OR`` routes nothing for sure)."""
    if node is None:
        return
    if isinstance(node, ast.BoolExpr) and node.boolop.name == "AND_EXPR":
        for arg in node.args:
            _equalities(arg, out)
    elif (
        isinstance(node, ast.A_Expr)
        and node.kind == A_Expr_Kind.AEXPR_OP
        and [n.sval for n in node.name] == ["="]
    ):
        if isinstance(node.lexpr, ast.RowExpr) and isinstance(node.rexpr, ast.RowExpr):
            out.extend(zip(node.lexpr.args, node.rexpr.args, strict=False))
        else:
            out.append((node.lexpr, node.rexpr))


def _user_id_of(expr: Any, block: Block) -> str | None:
    """The alias whose ``user_id`` ``expr`` is, if it is one."""
    if not isinstance(expr, ast.ColumnRef):
        return None
    names = [getattr(f, "sval", None) for f in expr.fields]
    if names[-1] != "user_id":
        return None
    return names[0] if len(names) == 2 else block.single


def _is_value(expr: Any) -> bool:
    while isinstance(expr, ast.TypeCast):
        expr = expr.arg
    return isinstance(expr, _VALUE)


def _routed(block: Block, outer: set[str]) -> set[str]:
    """The aliases of ``block`` routed to one tenant, with those of enclosing blocks."""
    routed = set(outer) | block.derived
    # ``outer`` starts as the statement's CTE names: a reference to a CTE is a derived source
    routed |= {alias for alias, table in block.tables.items() if table in outer}
    pairs = [(_user_id_of(a, block), _user_id_of(b, block), a, b) for a, b in block.equalities]
    for left, right, a, b in pairs:
        if left and _is_value(b):
            routed.add(left)
        if right and _is_value(a):
            routed.add(right)
    changed = True
    while changed:  # joins on user_id carry a route from table to table
        changed = False
        for left, right, _, _ in pairs:
            if left and right and (left in routed) != (right in routed):
                routed |= {left, right}
                changed = True
    return routed


def _nested(node: Any) -> Iterator[Any]:
    """Query blocks inside ``node`` (subqueries of FROM, WHERE, the select list), not CTEs."""
    for child in _children(node):
        if child is getattr(node, "withClause", None):
            continue
        yield from _queries(child)


def _queries(node: Any) -> Iterator[Any]:
    if isinstance(node, ast.Node) and _is_query(node):
        yield node
        return
    for child in _children(node):
        yield from _queries(child)


def _children(node: Any) -> Iterable[Any]:
    if isinstance(node, tuple | list):
        yield from node
    elif isinstance(node, ast.Node):
        for name in node:
            yield getattr(node, name)


_LOGGED = re.compile(
    r"^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] LOG:  (?:statement|execute [^:]+): (.*)$"
)
_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] ")


def logged_statements(log: str) -> list[str]:
    """The statements ``log_statement = all`` wrote to a server log (stderr format, the
    default prefix), each with its continuation lines."""
    out: list[str] = []
    current: list[str] | None = None
    for line in log.splitlines():
        if _ENTRY.match(line):
            if current is not None:
                out.append("\n".join(current))
            match = _LOGGED.match(line)
            current = [match.group(1)] if match else None
        elif current is not None:
            current.append(line)
    if current is not None:
        out.append("\n".join(current))
    return out
