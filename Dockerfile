# Production image: web (gunicorn) and Celery workers share it; docker-compose.yml picks
# the command. The default image installs requirements.txt, which has no torch: GPU work is
# dispatched to the "gpu" queue, whose workers run an image built with
#   docker build --build-arg REQUIREMENTS=requirements-gpu.txt -t hv-gpu-worker .
FROM python:3.11-slim
ARG REQUIREMENTS=requirements.txt

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings \
    HV_VAR_DIR=/data/var \
    MEDIA_ROOT=/data/media \
    STATIC_ROOT=/app/staticfiles

WORKDIR /app

COPY requirements*.txt requirements*.lock ./
# every set from its lock (scripts/lock), each file checked against its SHA-256:
# requirements.txt -> requirements.lock, requirements-gpu.txt -> requirements-gpu.lock, ...
RUN LOCK="$(echo "$REQUIREMENTS" | sed 's/\.txt$//').lock" \
    && if [ "$REQUIREMENTS" = requirements.txt ]; then LOCK=requirements.lock; fi \
    && pip install --require-hashes --no-deps -r "$LOCK"

COPY . .
RUN python manage.py collectstatic --noinput -v 0 \
    && useradd --create-home --uid 1000 hv \
    && mkdir -p /data/var /data/media \
    && chown -R hv:hv /data

USER hv
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status == 200 else 1)"
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "2", "--threads", "4", "--access-logfile", "-"]
