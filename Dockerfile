# The May I game service: API (gunicorn) or job worker, from one image.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY engine ./engine
COPY service ./service
COPY bots ./bots
RUN pip install . && useradd --create-home mayi
USER mayi

EXPOSE 8000
# The API: gunicorn with gevent workers (set in mayi_service.gunicorn_config, as for
# `mayi serve`); docker-compose runs the worker from the same image with `mayi worker`.
CMD ["gunicorn", "-c", "python:mayi_service.gunicorn_config", "--bind", "0.0.0.0:8000", "mayi_service.wsgi:app"]
