# One image for web and workers.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

RUN apt-get update && apt-get install -y --no-install-recommends libpq5 curl && rm -rf /var/lib/apt/lists/*

COPY pyproject.toml README.md ./
COPY config ./config
COPY annotation ./annotation
COPY jobs ./jobs
COPY labeling ./labeling
COPY mlworkers ./mlworkers
# torch is installed first and pinned; pass --build-arg TORCH_INDEX_URL=<PyTorch's CPU or CUDA wheel
# index> to choose the build (the default index serves the CUDA one, several GB).
ARG TORCH_INDEX_URL=""
RUN if [ -n "$TORCH_INDEX_URL" ]; then pip install --index-url "$TORCH_INDEX_URL" torch==2.13.0; \
    else pip install torch==2.13.0; fi \
    && pip install .

COPY . .
RUN SECRET_KEY=build-only python manage.py collectstatic --noinput

RUN useradd --create-home app && mkdir -p /app/media && chown -R app /app/media
USER app
EXPOSE 8000
CMD ["sh", "-c", "exec gunicorn config.wsgi:application --bind 0.0.0.0:8000 --workers ${WEB_CONCURRENCY:-3} --threads 4"]
