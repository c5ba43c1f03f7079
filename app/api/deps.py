"""Typed dependencies the routers share (full-stack-fastapi-template's ``deps.py``).

Everything lives on ``app.state`` (set by ``create_app``), so two apps in one process (tests)
never share settings, store or templates:

- ``SettingsDep``  -> app.config.Settings
- ``StoreDep``     -> app.store.ShareStore (create/get shares)
- ``TemplatesDep`` -> Jinja2Templates on the top-level templates/ directory; pages render
  with ``templates.TemplateResponse(request, "page.html", {...})`` and read the CSP nonce as
  ``request.state.csp_nonce``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.templating import Jinja2Templates

from app.config import Settings
from app.store import ShareStore


def get_app_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_store(request: Request) -> ShareStore:
    return request.app.state.store


def get_templates(request: Request) -> Jinja2Templates:
    return request.app.state.templates


SettingsDep = Annotated[Settings, Depends(get_app_settings)]
StoreDep = Annotated[ShareStore, Depends(get_store)]
TemplatesDep = Annotated[Jinja2Templates, Depends(get_templates)]
