"""The app factory: ``create_app(settings) -> FastAPI``.

Start it with ``attnscope serve`` or ``python -m uvicorn app.main:create_app --factory``.
Importing this module does nothing heavy: settings are read, the share store is opened and
the routers (and with them torch) are imported only inside ``create_app``.

What the factory wires up:
- every router in ``app.api.ROUTER_MODULES``;
- ``/static`` from the repository's static/ directory, and
  ``/static/vendor/plotly.min.js`` from the installed plotly package (never a CDN);
- Jinja2 templates from templates/ on ``app.state.templates``;
- the share store on ``app.state.store``, settings on ``app.state.settings``;
- a request-body limit (413 with a JSON detail), the 422 handlers, security headers,
  CORS only if configured.
"""

from __future__ import annotations

import importlib
import secrets
from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import ROOT, Settings, get_settings

STATIC_DIR = ROOT / "static"
TEMPLATES_DIR = ROOT / "templates"

#: CSP for HTML pages (NOTES.md: what plotly.js 4 heatmaps survive). {nonce} per response.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'nonce-{nonce}'; "
       "img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
       "frame-ancestors 'none'; form-action 'self'")
#: Swagger UI's page (/docs) starts itself with an inline script.
CSP_EXEMPT = ("/docs",)
#: Everything that is not an HTML page (JSON, scripts, images) may load nothing itself.
CSP_NOT_HTML = "default-src 'none'; frame-ancestors 'none'"
YEAR = 365 * 24 * 3600


class SecurityHeaders:
    """Pure ASGI middleware: nosniff + no-referrer on every response; CSP on HTML pages.

    The nonce is drawn before the app runs and put in ``request.state.csp_nonce`` so a
    template can write ``<style nonce="{{ request.state.csp_nonce }}">``.
    """

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["csp_nonce"] = nonce
        exempt = scope["path"].startswith(CSP_EXEMPT)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                ctype = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                if b"x-content-type-options" not in names:
                    headers.append((b"x-content-type-options", b"nosniff"))
                if b"referrer-policy" not in names:
                    headers.append((b"referrer-policy", b"no-referrer"))
                if exempt:
                    pass
                elif ctype.startswith(b"text/html"):
                    headers.append((b"content-security-policy",
                                    CSP.format(nonce=nonce).encode()))
                    headers.append((b"x-frame-options", b"DENY"))
                elif b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", CSP_NOT_HTML.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyLimit:
    """Pure ASGI request-body limit that answers 413 with a JSON ``detail``.

    A Content-Length over the limit is refused before anything reads the body; a chunked
    (or lying) body is counted as it arrives and refused the moment it passes the limit.
    Raising HTTPException from ``receive`` reaches FastAPI's handler, which answers JSON.
    (FastAPI's own ``max_body_size`` answers plain text from outside every middleware, so
    the JSON error shape and the security headers would be lost.)
    """

    def __init__(self, app: ASGIApp, limit: int):
        self.app = app
        self.limit = limit

    def _detail(self, got: str) -> str:
        return f"request body: expected at most {self.limit} bytes, got {got}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limit:
            response = JSONResponse({"detail": self._detail(f"{int(length)}")}, 413,
                                    headers={"connection": "close"})
            await response(scope, receive, send)
            return
        total = 0

        async def receive_counted() -> Message:
            nonlocal total
            message = await receive()
            if message["type"] == "http.request":
                total += len(message.get("body", b""))
                if total > self.limit:
                    raise HTTPException(413, self._detail(f"more than {self.limit}"))
            return message

        await self.app(scope, receive_counted, send)


def include_routers(app: FastAPI) -> None:
    """Import every module in ROUTER_MODULES and include its ``router``."""
    from app.api import ROUTER_MODULES

    for name in ROUTER_MODULES:
        app.include_router(importlib.import_module(name).router)


def plotly_js_path() -> Path:
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def mount_static(app: FastAPI) -> None:
    """plotly.js from the installed package (route first, so /static does not shadow it)."""
    js = plotly_js_path()

    @app.get("/static/vendor/plotly.min.js", include_in_schema=False, name="plotly_js")
    def plotly_min_js() -> FileResponse:
        return FileResponse(js, media_type="text/javascript",
                            headers={"Cache-Control": f"public, max-age={YEAR}, immutable"})

    mount_docs(app)
    app.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")


def mount_docs(app: FastAPI) -> None:
    """/docs: Swagger UI from the installed ``swagger-ui-bundle`` package, so the API's
    interactive documentation works offline (FastAPI's default loads it from a CDN)."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from swagger_ui_bundle import swagger_ui_path

    app.mount("/static/vendor/swagger-ui", StaticFiles(directory=swagger_ui_path),
              name="swagger_ui")

    @app.get("/docs", include_in_schema=False)
    def docs() -> Response:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url, title=f"{app.title}: JSON API v1",
            swagger_js_url="/static/vendor/swagger-ui/swagger-ui-bundle.js",
            swagger_css_url="/static/vendor/swagger-ui/swagger-ui.css",
            swagger_favicon_url="/static/favicon.svg")


def make_templates() -> Jinja2Templates:
    import plotly

    templates = Jinja2Templates(directory=TEMPLATES_DIR)
    # cache-busting query for the long-cached plotly.js: changes when plotly is upgraded
    templates.env.globals["plotly_version"] = plotly.__version__
    return templates


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the application. ``settings`` defaults to the environment (get_settings())."""
    from app.api import errors
    from app.store import store_from_url

    settings = settings or get_settings()
    # opened here, not in a lifespan, so an app serves its store whether or not its
    # lifespan runs (TestClient without `with`, several test clients on one app)
    store = store_from_url(settings.database_url)

    app = FastAPI(
        docs_url=None,  # served by mount_docs from local files
        redoc_url=None,
        title="attnscope",
        version="1.0.0",
        summary="Attention mechanisms, traced step by step: JSON API v1.",
        description=("Runs an attention mechanism on your tokens, matrices and weights and "
                     "returns every intermediate step. Rows are tokens; a weight maps by "
                     "right-multiplication (Q = X·W_q, W_q is d_model × d_k)."),
    )
    if settings.torch_threads:
        import torch

        torch.set_num_threads(settings.torch_threads)
    app.state.settings = settings
    app.state.store = store
    app.state.templates = make_templates()
    errors.install(app)
    mount_static(app)
    include_routers(app)
    if settings.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins,
                           allow_methods=["GET", "POST"], allow_headers=["Content-Type"])
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(SecurityHeaders)
    return app
