# One image for every stage: `pmflow-gateway run --stage NAME` picks what a container runs,
# and the same image serves the MCP corpus server and the one-shot `topics create`.
# Build: docker build -t pmflow-query-gateway:local .

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# A virtualenv copied whole into the runtime stage: no compilers or caches ship.
RUN python -m venv /opt/pmflow
WORKDIR /src
# Dependencies from the runtime lock first (exact versions, hash-checked, a cached layer of
# their own), then the project alone on top.
COPY requirements-runtime.lock ./
RUN /opt/pmflow/bin/pip install --require-hashes -r requirements-runtime.lock
COPY pyproject.toml README.md LICENSE ./
COPY pmflow_gateway ./pmflow_gateway
RUN /opt/pmflow/bin/pip install --no-deps .

FROM python:3.11-slim
ENV PATH=/opt/pmflow/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PMFLOW_DATA_DIR=/var/lib/pmflow
COPY --from=build /opt/pmflow /opt/pmflow
# Fixed ids, so mounted volumes can be chowned to match from outside.
RUN groupadd --system --gid 10001 pmflow \
    && useradd --system --uid 10001 --gid pmflow --home-dir /var/lib/pmflow --create-home pmflow
USER 10001:10001
WORKDIR /var/lib/pmflow
ENTRYPOINT ["pmflow-gateway"]
CMD ["run"]
