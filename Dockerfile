# attnscope, CPU image: the web server on 0.0.0.0:8000, shares in a SQLite file on /data.
#   docker build -t attnscope .
#   docker run -p 8000:8000 -v attnscope-data:/data attnscope
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# CPU-only PyTorch first (a large layer that rarely changes); the project's torch>=2.2 is
# then already satisfied and pip does not fetch the CUDA build.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu

# The app finds static/ and templates/ next to its package, so it is installed in place.
COPY pyproject.toml README.md ./
COPY app ./app
COPY static ./static
COPY templates ./templates
RUN pip install -e .

RUN useradd --system --uid 10001 --no-create-home attnscope \
    && mkdir -p /data && chown attnscope /data
USER attnscope

ENV ATTNSCOPE_DATABASE_URL=sqlite:////data/attnscope.db \
    MALLOC_ARENA_MAX=2
VOLUME /data
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/v1/health', timeout=4)"

CMD ["attnscope", "serve", "--host", "0.0.0.0", "--port", "8000"]
