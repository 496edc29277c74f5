"""Catalogs against approval: pins (``catalog pin``), the CI check (``catalog check``), each server's
status (serve's ``get_catalog_status``, ``gate``'s ``catalog`` section) and the reports of ``mcpeval-nb
catalog`` and ``mcpeval-nb usage`` (docs/catalog.md).  Built on ``analysis.catalog`` and
``analysis.usage``: labels, digests, counts and times only."""

from __future__ import annotations

from .check import CHECK_FORMATS, FAIL_ON, CatalogCheck, check_catalogs
from .pins import PinResult, pin_catalogs
from .report import REPORT_FORMATS, CatalogReport, UsageReport, catalog_report, usage_report
from .status import CatalogChange, CatalogStatus, DeadTool, NewFlag, ServerStatus, catalog_status

__all__ = [
    "CHECK_FORMATS",
    "FAIL_ON",
    "REPORT_FORMATS",
    "CatalogChange",
    "CatalogCheck",
    "CatalogReport",
    "CatalogStatus",
    "DeadTool",
    "NewFlag",
    "PinResult",
    "ServerStatus",
    "UsageReport",
    "catalog_report",
    "catalog_status",
    "check_catalogs",
    "pin_catalogs",
    "usage_report",
]
