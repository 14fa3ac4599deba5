# syntax=docker/dockerfile:1
# One image for every memstream process: `memstream worker`, `memstream project`,
# `memstream migrate`, `memstream publish FILE.jsonl`. The image talks to an external Kafka
# and PostgreSQL (compose services or Strimzi/CloudNativePG), so it carries no Java and no
# database server of its own.

# ---- build: install the distribution into a virtualenv -------------------------------------
FROM python:3.11-slim AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# A compiler and OpenSSL's headers for memstream's one C module (streams/erasure/_opening.c,
# the projector's opening of sealed records; it links the libcrypto the runtime image already
# has) and for the rare dependency without a wheel for this platform; they stay in this stage
# and never reach the runtime image.
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential libssl-dev \
    && rm -rf /var/lib/apt/lists/*

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

WORKDIR /src
COPY . .
RUN pip install --upgrade pip \
    && pip install .

# ---- runtime --------------------------------------------------------------------------------
FROM python:3.11-slim AS runtime

LABEL org.opencontainers.image.title="memstream" \
      org.opencontainers.image.description="Event-sourced consolidation of AI-agent memory: Kafka + Faust + PostgreSQL/pgvector" \
      org.opencontainers.image.licenses="Apache-2.0"

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    MEMSTREAM_WORKER_DATA_DIR=/var/lib/memstream/worker \
    MEMSTREAM_WORKER_METRICS_PORT=9101 \
    MEMSTREAM_PROJECTOR_METRICS_PORT=9102 \
    MEMSTREAM_HTTP_PORT=8080 \
    MEMSTREAM_HTTP_METRICS_PORT=9103

# An unprivileged user; the worker's RocksDB table state lives under /var/lib/memstream/worker,
# which compose and Kubernetes mount as a volume (created here so a fresh named volume
# inherits the ownership).
RUN groupadd --system --gid 10001 memstream \
    && useradd --system --uid 10001 --gid memstream --create-home --home-dir /home/memstream \
       --shell /usr/sbin/nologin memstream \
    && mkdir -p /var/lib/memstream/worker \
    && chown -R memstream:memstream /var/lib/memstream

COPY --from=build /opt/venv /opt/venv
# The Avro contract, also beside the working directory for tools that read schemas/ directly.
COPY --from=build --chown=memstream:memstream /src/schemas /app/schemas

WORKDIR /app
USER memstream:memstream

# worker metrics, projector metrics, the HTTP API and its metrics
EXPOSE 9101 9102 8080 9103

ENTRYPOINT ["memstream"]
CMD ["worker"]
