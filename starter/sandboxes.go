package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"mlerl/sandbox"
)

// sandboxFlags choose where agents' programs run.
type sandboxFlags struct {
	Kind   string  `json:"sandbox"`
	Image  string  `json:"docker_image,omitempty"`
	CPUs   float64 `json:"docker_cpus,omitempty"`
	Unsafe bool    `json:"unsafe_no_sandbox"`
}

func (s *sandboxFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.Kind, "sandbox", "bubblewrap", "where programs run: bubblewrap (this host) or docker (containers through the Docker API)")
	fs.StringVar(&s.Image, "docker-image", sandbox.DefaultDockerImage, "with --sandbox docker: the image (build it offline with scripts/build-sandbox-image.sh)")
	fs.Float64Var(&s.CPUs, "docker-cpus", 1, "with --sandbox docker: CPUs per program")
	fs.BoolVar(&s.Unsafe, "unsafe-no-sandbox", false, "run agents' programs WITHOUT bubblewrap (only where namespaces are unavailable)")
}

// open builds the sandbox; python is the host interpreter bubblewrap runs (Docker uses the
// image's own).
func (s sandboxFlags) open(ctx context.Context, python string) (sandbox.Sandbox, error) {
	switch s.Kind {
	case "bubblewrap", "":
		return sandbox.NewLocal(python, s.Unsafe)
	case "docker":
		if s.Unsafe {
			return nil, errors.New("--unsafe-no-sandbox applies to bubblewrap, not to --sandbox docker")
		}
		return sandbox.NewDocker(ctx, sandbox.DockerOptions{Image: s.Image, CPUs: s.CPUs})
	}
	return nil, fmt.Errorf("--sandbox must be bubblewrap or docker, got %q", s.Kind)
}
