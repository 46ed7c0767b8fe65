package artifacts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ContentPrefix starts the keys PutContent returns.
const ContentPrefix = "blobs/sha256/"

// ErrCorrupt is returned by GetContent when a blob's bytes do not match its key.
var ErrCorrupt = errors.New("artifact is corrupt")

// ErrNotContentKey: GetContent was given a key PutContent did not make.
var ErrNotContentKey = errors.New("not a content key")

// ContentHash is the hex sha256 of data: a content key's name, and the identity of equal bytes.
func ContentHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// PutContent stores data under blobs/sha256/<hex of its sha256> and returns that key.
func PutContent(ctx context.Context, store Store, data []byte) (string, error) {
	key := ContentPrefix + ContentHash(data)
	if err := store.Put(ctx, key, data); err != nil {
		return "", err
	}
	return key, nil
}

// GetContent loads a key from PutContent and checks the data still hashes to it.
func GetContent(ctx context.Context, store Store, key string) ([]byte, error) {
	want, ok := strings.CutPrefix(key, ContentPrefix)
	if _, err := hex.DecodeString(want); !ok || err != nil || len(want) != 2*sha256.Size {
		return nil, fmt.Errorf("artifact key %q is %w (%s<64 hex digits>)", key, ErrNotContentKey, ContentPrefix)
	}
	data, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if got := ContentHash(data); got != want {
		return nil, fmt.Errorf("%w: %s has sha256 %s, not the %s its key names", ErrCorrupt, store.Location(key), got, want)
	}
	return data, nil
}
