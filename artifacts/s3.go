package artifacts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
)

// Backoff bounds the retries of transient S3 failures (network errors, 5xx, throttling).
type Backoff struct {
	Attempts int           // tries in all, the first included
	Initial  time.Duration // wait after the first failure, doubled after each further one
	Max      time.Duration // cap on one wait
}

// DefaultBackoff rides out 12 to 24 s of outage (a restarting MinIO, a throttling burst);
// Temporal retries the activity after that.
var DefaultBackoff = Backoff{Attempts: 8, Initial: 250 * time.Millisecond, Max: 8 * time.Second}

// S3Runs keeps each run under <Prefix>/<run-id>/ in Bucket.
type S3Runs struct {
	Client *minio.Client // built with MaxRetries: 1, so Backoff alone decides retries
	Bucket string
	Prefix string     // without slashes at either end; may be empty
	Retry  Backoff    // zero means DefaultBackoff
	bucket bucketOnce // shared by the runs' stores: the bucket is checked once per process
}

// NewS3Runs returns the runs of bucket/prefix with DefaultBackoff.
func NewS3Runs(client *minio.Client, bucket, prefix string) *S3Runs {
	return &S3Runs{Client: client, Bucket: bucket, Prefix: strings.Trim(prefix, "/"), Retry: DefaultBackoff}
}

// Run returns the run's store; the id must be one path segment, as for FSRuns.
func (r *S3Runs) Run(id string) (Store, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return nil, fmt.Errorf("run id %q is not a folder name", id)
	}
	return &S3{client: r.Client, bucket: r.Bucket, prefix: path.Join(r.Prefix, id), retry: r.Retry,
		ready: &r.bucket}, nil
}

// S3 is one run's artifacts: objects under prefix in bucket.
type S3 struct {
	client *minio.Client
	bucket string
	prefix string
	retry  Backoff
	ready  *bucketOnce
}

// bucketOnce creates the bucket on first use. Not a sync.Once: a failure (MinIO still starting)
// must let the next call try again.
type bucketOnce struct {
	mu   sync.Mutex
	done bool
}

func (s *S3) ensureBucket(ctx context.Context) error {
	s.ready.mu.Lock()
	defer s.ready.mu.Unlock()
	if s.ready.done {
		return nil
	}
	err := s.retrying(ctx, "creating bucket s3://"+s.bucket, func() error {
		ok, err := s.client.BucketExists(ctx, s.bucket)
		if err != nil || ok {
			return err
		}
		err = s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{})
		if code := s3Code(err); code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" {
			return nil // another worker created it meanwhile
		}
		return err
	})
	s.ready.done = err == nil
	return err
}

// object maps a key to its object name with FS's rules, so both stores accept the same keys.
func (s *S3) object(key string) (string, error) {
	clean := path.Clean("/" + key)
	if clean == "/" || strings.Contains(key, "..") {
		return "", fmt.Errorf("artifact key %q is not a relative path", key)
	}
	return path.Join(s.prefix, clean[1:]), nil
}

// Put uploads data; S3 replaces an object atomically, so readers never see half of it.
func (s *S3) Put(ctx context.Context, key string, data []byte) error {
	name, err := s.object(key)
	if err != nil {
		return err
	}
	if err := s.ensureBucket(ctx); err != nil {
		return err
	}
	return s.retrying(ctx, "putting "+s.Location(key), func() error {
		_, err := s.client.PutObject(ctx, s.bucket, name, bytes.NewReader(data), int64(len(data)),
			minio.PutObjectOptions{ContentType: "application/octet-stream"})
		return err
	})
}

// Get downloads key; a missing key is ErrNotFound.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	name, err := s.object(key)
	if err != nil {
		return nil, err
	}
	if err := s.ensureBucket(ctx); err != nil {
		return nil, err
	}
	var data []byte
	err = s.retrying(ctx, "getting "+s.Location(key), func() error {
		obj, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer obj.Close()
		data, err = io.ReadAll(obj) // errors, NoSuchKey included, surface on the first read
		return err
	})
	if s3Code(err) == "NoSuchKey" {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, s.Location(key))
	}
	return data, err
}

// Location is s3://bucket/prefix/run/key.
func (s *S3) Location(key string) string {
	name, err := s.object(key)
	if err != nil {
		return key
	}
	return "s3://" + s.bucket + "/" + name
}

// retrying runs op until it succeeds, fails permanently, or the backoff is spent; the error
// says what was being done.
func (s *S3) retrying(ctx context.Context, what string, op func() error) error {
	b := s.retry
	if b.Attempts < 1 {
		b = DefaultBackoff
	}
	wait := b.Initial
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !transient(err) {
			return fmt.Errorf("%s: %w", what, err)
		}
		if attempt == b.Attempts {
			return fmt.Errorf("%s: gave up after %d attempts: %w", what, attempt, err)
		}
		// Jitter spreads the retries of workers throttled at the same moment.
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), err)
		case <-t.C:
		}
		wait = min(2*wait, b.Max)
	}
}

// transient says whether retrying may help: network errors, 5xx and throttling, never other
// 4xx (a missing key or a bad credential stays so).
func transient(err error) bool {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && (resp.StatusCode != 0 || resp.Code != "") {
		switch resp.Code {
		case "SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded",
			"RequestThrottled", "RequestTimeout", "InternalError", "ServiceUnavailable":
			return true
		}
		return resp.StatusCode >= 500 || resp.StatusCode == 429 || resp.StatusCode == 408
	}
	var netErr net.Error // refused, reset, timed out: *url.Error and *net.OpError are net.Errors
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF)
}

// s3Code is the S3 error code in err ("NoSuchKey"), or "".
func s3Code(err error) string {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		return resp.Code
	}
	return ""
}

// Content-addressed artifacts (checkpoints): the key is the data's sha256, so a blob written
// twice is stored once, and a load can prove it got the bytes that were saved.
