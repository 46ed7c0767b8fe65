package artifacts

import (
	"strings"
	"testing"
)

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestOpenRunsFolders(t *testing.T) {
	for _, tc := range []struct{ uri, root string }{
		{"runs", "runs"},
		{"/var/mlerl/runs", "/var/mlerl/runs"},
		{"file:///var/mlerl/runs", "/var/mlerl/runs"},
		{"file://runs", "runs"},
	} {
		r, err := OpenRuns(tc.uri, envOf(nil))
		if err != nil {
			t.Errorf("%s: %v", tc.uri, err)
			continue
		}
		if fs, ok := r.(FSRuns); !ok || fs.Root != tc.root {
			t.Errorf("%s: got %#v, want FSRuns{Root: %q}", tc.uri, r, tc.root)
		}
	}
}

func TestOpenRunsS3(t *testing.T) {
	minioEnv := map[string]string{"MLERL_S3_ENDPOINT": "127.0.0.1:9000",
		"MINIO_ROOT_USER": "admin", "MINIO_ROOT_PASSWORD": "secret123"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range minioEnv {
			m[k] = v
		}
		for k, v := range extra {
			if v == "" {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	for _, tc := range []struct {
		name string
		uri  string
		env  map[string]string
		want s3Config
		err  string // part of the error, when one is expected
	}{
		{name: "minio", uri: "s3://mlerl/runs", env: minioEnv,
			want: s3Config{bucket: "mlerl", prefix: "runs", endpoint: "127.0.0.1:9000", user: "admin", password: "secret123"}},
		{name: "no prefix", uri: "s3://mlerl", env: minioEnv,
			want: s3Config{bucket: "mlerl", endpoint: "127.0.0.1:9000", user: "admin", password: "secret123"}},
		{name: "nested prefix, slashes trimmed", uri: "s3://mlerl/prod/runs/", env: minioEnv,
			want: s3Config{bucket: "mlerl", prefix: "prod/runs", endpoint: "127.0.0.1:9000", user: "admin", password: "secret123"}},
		{name: "aws variables win over minio's", uri: "s3://bkt/p",
			env:  with(map[string]string{"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_SESSION_TOKEN": "T", "AWS_REGION": "eu-west-1"}),
			want: s3Config{bucket: "bkt", prefix: "p", endpoint: "127.0.0.1:9000", user: "AK", password: "SK", token: "T", region: "eu-west-1"}},
		{name: "AWS_ENDPOINT_URL with https", uri: "s3://bkt",
			env:  with(map[string]string{"MLERL_S3_ENDPOINT": "", "AWS_ENDPOINT_URL": "https://s3.example.com/"}),
			want: s3Config{bucket: "bkt", endpoint: "s3.example.com", secure: true, user: "admin", password: "secret123"}},
		{name: "http:// scheme stripped", uri: "s3://bkt",
			env:  with(map[string]string{"MLERL_S3_ENDPOINT": "http://minio:9000"}),
			want: s3Config{bucket: "bkt", endpoint: "minio:9000", user: "admin", password: "secret123"}},
		{name: "MLERL_S3_SECURE", uri: "s3://bkt",
			env:  with(map[string]string{"MLERL_S3_SECURE": "true"}),
			want: s3Config{bucket: "bkt", endpoint: "127.0.0.1:9000", secure: true, user: "admin", password: "secret123"}},
		{name: "MLERL_S3_ENDPOINT wins", uri: "s3://bkt",
			env:  with(map[string]string{"AWS_ENDPOINT_URL": "https://elsewhere"}),
			want: s3Config{bucket: "bkt", endpoint: "127.0.0.1:9000", user: "admin", password: "secret123"}},
		{name: "AWS_DEFAULT_REGION", uri: "s3://bkt",
			env:  with(map[string]string{"AWS_DEFAULT_REGION": "us-west-2"}),
			want: s3Config{bucket: "bkt", endpoint: "127.0.0.1:9000", user: "admin", password: "secret123", region: "us-west-2"}},

		{name: "no endpoint", uri: "s3://bkt", env: with(map[string]string{"MLERL_S3_ENDPOINT": ""}), err: "set MLERL_S3_ENDPOINT or AWS_ENDPOINT_URL"},
		{name: "no credentials", uri: "s3://bkt", env: map[string]string{"MLERL_S3_ENDPOINT": "h:1"}, err: "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or MINIO_ROOT_USER and MINIO_ROOT_PASSWORD)"},
		{name: "half the aws pair", uri: "s3://bkt", env: with(map[string]string{"AWS_ACCESS_KEY_ID": "AK"}), err: "AWS_SECRET_ACCESS_KEY is not"},
		{name: "half the minio pair", uri: "s3://bkt", env: with(map[string]string{"MINIO_ROOT_PASSWORD": ""}), err: "MINIO_ROOT_PASSWORD is not"},
		{name: "bad MLERL_S3_SECURE", uri: "s3://bkt", env: with(map[string]string{"MLERL_S3_SECURE": "yes please"}), err: "MLERL_S3_SECURE"},
		{name: "endpoint with a path", uri: "s3://bkt", env: with(map[string]string{"MLERL_S3_ENDPOINT": "http://h:9000/x"}), err: "want host:port"},
		{name: "no bucket", uri: "s3:///runs", env: minioEnv, err: "bucket"},
		{name: "bad bucket", uri: "s3://Not_A_Bucket/runs", env: minioEnv, err: "bucket"},
		{name: "endpoint in the uri", uri: "s3://127.0.0.1:9000/bkt", env: minioEnv, err: "AWS_ENDPOINT_URL"},
		{name: "query", uri: "s3://bkt/p?region=x", env: minioEnv, err: "want s3://bucket/prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s3ConfigFrom(tc.uri, envOf(tc.env))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %+v, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}

func TestOpenRunsErrors(t *testing.T) {
	for _, tc := range []struct{ uri, err string }{
		{"", "artifact store is empty"},
		{"file://", "names no folder"},
		{"gs://bucket/runs", `unknown scheme "gs"`},
		{"s3://bkt/runs", "set MLERL_S3_ENDPOINT or AWS_ENDPOINT_URL"},
	} {
		if _, err := OpenRuns(tc.uri, envOf(nil)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: got %v, want an error containing %q", tc.uri, err, tc.err)
		}
	}
	r, err := OpenRuns("s3://mlerl/runs", envOf(map[string]string{"AWS_ENDPOINT_URL": "127.0.0.1:9000",
		"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}))
	if err != nil {
		t.Fatal(err)
	}
	s3, ok := r.(*S3Runs)
	if !ok || s3.Bucket != "mlerl" || s3.Prefix != "runs" || s3.Client.EndpointURL().String() != "http://127.0.0.1:9000" {
		t.Fatalf("got %#v", r)
	}
}
