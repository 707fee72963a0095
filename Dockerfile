# Inbox Service: HTTP API on 8000, SMTP on 2525.
#   docker build -t inbox-service .
#   docker run -p 8000:8000 -p 2525:2525 -v inbox-data:/data inbox-service
# Without DATABASE_URL it runs on the embedded PGlite database in /data (a
# volume, one instance only), with its encryption key generated once into
# /data/encryption.key; an ENCRYPTION_KEY of your own must be the same on
# every run. compose.yaml runs it on PostgreSQL.

# The Deno release the project is developed and tested with (README).
FROM denoland/deno:2.9.6

ENV DENO_NO_UPDATE_CHECK=1 \
    DENO_NO_PROMPT=1 \
    DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8000 \
    SMTP_PORT=2525

WORKDIR /app
# Everything below runs as the image's unprivileged `deno` user, which also
# owns the module cache (DENO_DIR), so run-time caching needs no root.
RUN mkdir -p /data && chown deno:deno /app /data
USER deno

# Dependencies first: this layer is rebuilt only when deno.json or deno.lock change.
# deno.lock holds the runtime dependencies only (the development tools are in
# deno.dev.lock, which .dockerignore keeps out), so this installs nothing else.
COPY --chown=deno:deno deno.json deno.lock ./
RUN deno install --frozen

COPY --chown=deno:deno . .
RUN deno cache src/main.ts

VOLUME ["/data"]
EXPOSE 8000 2525

# The image has no curl; Deno itself probes /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["deno", "eval", "--no-config", "const r = await fetch(`http://127.0.0.1:${Deno.env.get('PORT') ?? '8000'}/healthz`); await r.body?.cancel(); Deno.exit(r.ok ? 0 : 1)"]

ENTRYPOINT ["deno"]
CMD ["task", "start"]
