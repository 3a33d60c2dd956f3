# The May I game service: API (gunicorn) or job worker, from one image.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1

# deploy/wheels/: wheels pip may take instead of the package index's (empty in the
# repository). A build with no network puts every wheel there first and passes
# --build-arg PIP_NO_INDEX=1, as CI does (docs/operations.md, "What CI builds").
ARG PIP_NO_INDEX=
COPY deploy/wheels/ /tmp/wheels/
COPY pyproject.toml README.md LICENSE /tmp/src/
COPY engine /tmp/src/engine
COPY service /tmp/src/service
COPY sdk /tmp/src/sdk
COPY bots /tmp/src/bots
RUN pip install ${PIP_NO_INDEX:+--no-index} --find-links /tmp/wheels /tmp/src \
    && rm -rf /tmp/wheels /tmp/src \
    && useradd --create-home --uid 10001 mayi
USER mayi
WORKDIR /home/mayi

EXPOSE 8000
# The API: gunicorn with gevent workers (set in mayi_service.gunicorn_config, as for
# `mayi serve`); docker-compose runs the worker from the same image with `mayi worker`.
CMD ["gunicorn", "-c", "python:mayi_service.gunicorn_config", "--bind", "0.0.0.0:8000", "mayi_service.wsgi:app"]
