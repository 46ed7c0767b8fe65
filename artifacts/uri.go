package artifacts

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// OpenRuns opens the runs at uri: a folder (a plain path or file://path) or s3://bucket/prefix,
// whose endpoint and credentials come from env (os.Getenv when nil), as the AWS tools and
// MinIO name them.
func OpenRuns(uri string, env func(string) string) (Runs, error) {
	if env == nil {
		env = os.Getenv
	}
	if dir, ok := strings.CutPrefix(uri, "file://"); ok {
		uri = dir
		if dir == "" {
			return nil, errors.New("artifact store file:// names no folder: use file:///abs/path or a plain path")
		}
	} else if scheme, _, ok := strings.Cut(uri, "://"); ok && scheme != "s3" {
		return nil, fmt.Errorf("artifact store %q: unknown scheme %q (use a folder, file://path or s3://bucket/prefix)", uri, scheme)
	}
	if !strings.HasPrefix(uri, "s3://") {
		if uri == "" {
			return nil, errors.New("artifact store is empty: give a folder, file://path or s3://bucket/prefix")
		}
		return FSRuns{Root: uri}, nil
	}
	c, err := s3ConfigFrom(uri, env)
	if err != nil {
		return nil, err
	}
	client, err := minio.New(c.endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(c.user, c.password, c.token),
		Secure: c.secure,
		Region: c.region,
		// S3Runs' Backoff retries instead, with a budget callers (and tests) can set.
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", uri, err)
	}
	return NewS3Runs(client, c.bucket, c.prefix), nil
}

// s3Config is what OpenRuns reads from an s3:// URI and the environment.
type s3Config struct {
	bucket, prefix        string
	endpoint              string // host:port
	secure                bool
	user, password, token string
	region                string
}

func s3ConfigFrom(uri string, env func(string) string) (s3Config, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return s3Config{}, fmt.Errorf("artifact store %q: %w", uri, err)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Port() != "" {
		return s3Config{}, fmt.Errorf("artifact store %q: want s3://bucket/prefix (the endpoint comes from AWS_ENDPOINT_URL)", uri)
	}
	c := s3Config{bucket: u.Host, prefix: strings.Trim(u.Path, "/"), region: first(env, "AWS_REGION", "AWS_DEFAULT_REGION")}
	if err := s3utils.CheckValidBucketNameStrict(c.bucket); err != nil {
		return s3Config{}, fmt.Errorf("artifact store %q: bucket %q: %v", uri, c.bucket, err)
	}

	// MLERL_S3_ENDPOINT first: it is meant for mlerl alone, AWS_ENDPOINT_URL may serve other tools.
	endpoint := first(env, "MLERL_S3_ENDPOINT", "AWS_ENDPOINT_URL")
	if endpoint == "" {
		return s3Config{}, fmt.Errorf("artifact store %s: set MLERL_S3_ENDPOINT or AWS_ENDPOINT_URL to the S3 endpoint (host:port, e.g. 127.0.0.1:9000, or https://host)", uri)
	}
	secure := false
	if v := env("MLERL_S3_SECURE"); v != "" {
		if secure, err = strconv.ParseBool(v); err != nil {
			return s3Config{}, fmt.Errorf("MLERL_S3_SECURE=%q: want true or false", v)
		}
	}
	if rest, ok := strings.CutPrefix(endpoint, "https://"); ok {
		endpoint, secure = rest, true
	} else {
		endpoint = strings.TrimPrefix(endpoint, "http://")
	}
	c.endpoint, c.secure = strings.TrimSuffix(endpoint, "/"), secure
	if c.endpoint == "" || strings.ContainsAny(c.endpoint, "/?#") {
		return s3Config{}, fmt.Errorf("S3 endpoint %q: want host:port, optionally after http:// or https://", endpoint)
	}

	switch {
	case env("AWS_ACCESS_KEY_ID") != "" || env("AWS_SECRET_ACCESS_KEY") != "":
		c.user, c.password, c.token = env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"), env("AWS_SESSION_TOKEN")
		if c.user == "" {
			return s3Config{}, errors.New("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not: set it too")
		}
		if c.password == "" {
			return s3Config{}, errors.New("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not: set it too")
		}
	case env("MINIO_ROOT_USER") != "" || env("MINIO_ROOT_PASSWORD") != "":
		c.user, c.password = env("MINIO_ROOT_USER"), env("MINIO_ROOT_PASSWORD")
		if c.user == "" {
			return s3Config{}, errors.New("MINIO_ROOT_PASSWORD is set but MINIO_ROOT_USER is not: set it too")
		}
		if c.password == "" {
			return s3Config{}, errors.New("MINIO_ROOT_USER is set but MINIO_ROOT_PASSWORD is not: set it too")
		}
	default:
		return s3Config{}, fmt.Errorf("artifact store %s: no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or MINIO_ROOT_USER and MINIO_ROOT_PASSWORD)", uri)
	}
	return c, nil
}

// first is the first of the variables that is set.
func first(env func(string) string, names ...string) string {
	for _, n := range names {
		if v := env(n); v != "" {
			return v
		}
	}
	return ""
}
