# The mlerl binary with what its workers need: Debian's Python stack for agents' programs
# (bubblewrap sandbox) and the Docker CLI-free Docker sandbox client (it talks to the engine's
# socket). Build from the repository root: docker build -f deployments/worker.Dockerfile -t mlerl .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -o /out/starter ./starter

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      python3 python3-pandas python3-sklearn python3-xgboost python3-scipy python3-pil bubblewrap ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/starter /usr/local/bin/starter
ENTRYPOINT ["starter"]
