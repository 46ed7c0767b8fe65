package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTLSFlags(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o644)
	cases := []struct {
		name  string
		flags tlsFlags
		want  string // "" = no TLS; "ok" = a TLS config
	}{
		{"off", tlsFlags{}, ""},
		{"system roots", tlsFlags{Enabled: true}, "ok"},
		{"server name implies TLS", tlsFlags{ServerName: "temporal.internal"}, "ok"},
		{"cert without key", tlsFlags{Cert: "c.pem"}, "go together"},
		{"missing key pair", tlsFlags{Cert: "/nonexistent/c.pem", Key: "/nonexistent/k.pem"}, "--tls-cert/--tls-key"},
		{"CA file that is not PEM", tlsFlags{CA: notPEM}, "holds no PEM certificate"},
	}
	for _, c := range cases {
		cfg, err := c.flags.options()
		switch {
		case c.want == "" && (cfg != nil || err != nil):
			t.Errorf("%s: want no TLS, got %v %v", c.name, cfg, err)
		case c.want == "ok" && (cfg == nil || err != nil):
			t.Errorf("%s: want a TLS config, got %v %v", c.name, cfg, err)
		case c.want != "" && c.want != "ok" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: want an error containing %q, got %v", c.name, c.want, err)
		}
	}
}
