# The operator image that `kccgen bundle`'s Deployment names (generator/bundle.py
# DEFAULT_IMAGE; its tag is pyproject.toml's version):
#
#   docker build -t kccgen-operator:0.1.0 .
#
# Stage 1 builds the wheel and installs it, with its pinned dependencies, into
# one directory; stage 2 is that directory on a clean Python, run as a numeric
# non-root user. Nothing is written outside /tmp at run time (the .pyc files are
# compiled at install), so the Deployment's readOnlyRootFilesystem holds; the
# Deployment mounts an emptyDir at /tmp. No container engine runs in CI:
# tests/test_image.py builds the same layer (the wheel installed with --target
# into a directory) and runs the entrypoint from it, and checks that ENTRYPOINT,
# CMD, USER, EXPOSE and the writable paths agree with the bundle's Deployment.

FROM python:3.11-slim AS build
WORKDIR /src
# The context is what .dockerignore lets through: the packaging files and the
# package folders of [tool.kccgen.package-dirs].
COPY . .
RUN pip wheel --no-cache-dir --disable-pip-version-check --no-deps -w /dist . \
 && pip install --no-cache-dir --disable-pip-version-check --target /opt/kccgen -c constraints.txt /dist/kccgen-*.whl

FROM python:3.11-slim
COPY --from=build /opt/kccgen /opt/kccgen
# The console scripts' first line is /usr/local/bin/python, the same path in both stages.
ENV PYTHONPATH=/opt/kccgen \
    PATH=/opt/kccgen/bin:/usr/local/bin:/usr/bin:/bin \
    HOME=/tmp \
    PYTHONUNBUFFERED=1
# Numeric, so the kubelet can check runAsNonRoot; the Deployment runs as the same UID and GID.
USER 65532:65532
# /healthz, /readyz and /metrics; the admission webhook (HTTPS).
EXPOSE 8080 9443
ENTRYPOINT ["kccctl"]
CMD ["operator"]
