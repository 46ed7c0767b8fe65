#!/usr/bin/env bash
# Builds a MinIO server into ./bin (git-ignored) for the S3 artifact store's tests and for a
# local production-like stack. Idempotent: does nothing when bin/minio already runs. Building
# from source is the only way here: the machine reaches the Go module proxy, not a container
# registry.
set -euo pipefail
cd "$(dirname "$0")/.."
# MinIO's tags (RELEASE.2025-...) are not semantic versions, so @latest is the newest commit:
# v0.0.0-20260212201848-7aac2a2c5b7c, which builds with Go 1.26.8 (3m50s on 2 cores, downloads
# included, with part of the dependencies already in the build cache). MINIO_VERSION pins another.
# Pinned to the commit that @latest resolved to when this was tested, so a fresh machine builds
# the same server (upstream is in maintenance mode; any S3 server works with the store).
MINIO_VERSION="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
if [ -x bin/minio ] && bin/minio --version >/dev/null 2>&1; then
  exit 0
fi
echo "building github.com/minio/minio@${MINIO_VERSION} into bin/ (several minutes)"
GOBIN="$PWD/bin" go install "github.com/minio/minio@${MINIO_VERSION}"
bin/minio --version
