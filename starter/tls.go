package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// tlsFlags connect to a Temporal cluster over TLS (mutual TLS when a client certificate is
// given), as Temporal Cloud and most production clusters require.
type tlsFlags struct {
	Cert       string `json:"tls_cert,omitempty"`
	Key        string `json:"tls_key,omitempty"`
	CA         string `json:"tls_ca,omitempty"`
	ServerName string `json:"tls_server_name,omitempty"`
	Enabled    bool   `json:"tls,omitempty"`
}

func (t *tlsFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&t.Enabled, "tls", false, "connect to Temporal over TLS (implied by the other --tls-* flags)")
	fs.StringVar(&t.Cert, "tls-cert", "", "client certificate (PEM) for mutual TLS")
	fs.StringVar(&t.Key, "tls-key", "", "client private key (PEM) for mutual TLS")
	fs.StringVar(&t.CA, "tls-ca", "", "CA certificate (PEM) that signed the server's certificate (default: the system's)")
	fs.StringVar(&t.ServerName, "tls-server-name", "", "server name to verify, when it differs from the address's host")
}

// options returns the connection options, or nil when TLS is off.
func (t tlsFlags) options() (*tls.Config, error) {
	if !t.Enabled && t.Cert == "" && t.Key == "" && t.CA == "" && t.ServerName == "" {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: t.ServerName, MinVersion: tls.VersionTLS12}
	if (t.Cert == "") != (t.Key == "") {
		return nil, errors.New("--tls-cert and --tls-key go together (mutual TLS needs both)")
	}
	if t.Cert != "" {
		pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s holds no PEM certificate", t.CA)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// clientOptions builds the SDK's options for a cluster address.
func clientOptions(address, namespace string, t tlsFlags, logger log.Logger) (client.Options, error) {
	cfg, err := t.options()
	if err != nil {
		return client.Options{}, err
	}
	return client.Options{HostPort: address, Namespace: namespace, Logger: logger,
		ConnectionOptions: client.ConnectionOptions{TLS: cfg}}, nil
}
