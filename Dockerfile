# omoide's HTTP server (MCP at /mcp, web UI at /ui) in one image. See README "Docker".
FROM python:3.11-slim

# torch first, pinned and CPU-only: unpinned, sentence-transformers would pull a multi-GB CUDA
# build. torch is needed once, to export the bundled model to ONNX on first use.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    OMOIDE_HOST=0.0.0.0 \
    OMOIDE_PORT=8000 \
    OMOIDE_DATA_DIR=/data

WORKDIR /app
RUN pip install --index-url "$TORCH_INDEX_URL" torch==2.13.0
COPY pyproject.toml README.md LICENSE ./
COPY omoide ./omoide
RUN pip install '.[local,postgres,files,encryption,ann]'

# Not root; the database and the exported model live in the /data volume.
RUN useradd --create-home --uid 1000 omoide && mkdir /data && chown omoide /data
USER omoide
VOLUME /data
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4)"

# Binding 0.0.0.0 needs MEMORY_API_KEY: without one the server refuses to start (by design).
CMD ["omoide", "serve"]
