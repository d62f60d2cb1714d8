# syntax=docker/dockerfile:1
# Berth's image: `docker build -t berth-scheduler:0.1.0 .`
# The builder installs the project and its dependencies into a virtualenv; the runtime stage copies
# only that virtualenv, so pip's build dependencies and caches never reach the final image.
# Both stages use the same base image, so the venv's interpreter path is valid in the second one.
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/berth
WORKDIR /src
# README* (a glob) so that the build does not depend on the README existing.
COPY pyproject.toml README* ./
COPY operator ./operator
# pip compiles byte-code here, on purpose: the root filesystem is read-only at run time, and
# compiling kopf, kubernetes and numpy on every start costs about 2 s of start-up.
RUN /opt/berth/bin/pip install .

FROM ${PYTHON_IMAGE}
ENV PATH=/opt/berth/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# A named account for UID 10001: getpass.getuser() (kopf's default peer identity) needs one.
RUN groupadd --system --gid 10001 berth \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin berth
COPY --from=builder /opt/berth /opt/berth
USER 10001:10001
EXPOSE 10260
ENTRYPOINT ["berth"]
CMD ["run"]
