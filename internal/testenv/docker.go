package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/docker/docker/client"
)

// DockerImage is the sandbox image (sandbox.DefaultDockerImage; not imported, since the
// sandbox package's own tests use this one).
const DockerImage = "mlerl-sandbox:bookworm"

// RequireDockerImage returns a client of the local Docker engine and the sandbox image when the
// engine answers and holds the image. Otherwise the test is skipped, loudly: no image can be
// pulled here, so the image is built offline by scripts/build-sandbox-image.sh. Under CI=true
// the test fails instead of skipping.
func RequireDockerImage(t testing.TB) (*client.Client, string) {
	t.Helper()
	skip := func(reason string, args ...any) {
		t.Helper()
		SkipOrFail(t, "Docker sandbox tests: "+reason+"; run scripts/build-sandbox-image.sh", args...)
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		skip("no Docker client (%v)", err)
	}
	t.Cleanup(func() { cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		skip("the Docker engine at %s does not answer (%v)", cli.DaemonHost(), err)
	}
	if _, err := cli.ImageInspect(ctx, DockerImage); err != nil {
		skip("image %s is not in the local engine (%v)", DockerImage, err)
	}
	return cli, DockerImage
}
