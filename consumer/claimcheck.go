package consumer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ErrDataIntegrity is the error of a claim-checked event whose stored data
// is not what was published: its SHA-256 differs, or the object is missing.
// The event is not applied; the delivery fails, to be retried or dead
// lettered.
var ErrDataIntegrity = errors.New("consumer: the claim-checked data does not match its reference")

// maxClaimBytes bounds what a fetch reads: the writer stores at most 10 MiB.
const maxClaimBytes = 10 << 20

// DataRef is the published reference to a claim-checked event's data.
type DataRef struct {
	// URI is the object's S3 URI, s3://bucket/key.
	URI string `json:"uri"`
	// SHA256 is the data's SHA-256, in hex.
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// ObjectGetter is the part of the S3 client that fetches claim-checked
// data. *s3.Client has it.
type ObjectGetter interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// WithObjectStore lets the consumer fetch the data of claim-checked events
// from S3; without it such an event fails to apply.
func WithObjectStore(client ObjectGetter) ConsumerOption {
	return func(s *consumerSettings) { s.objects = client }
}

// fetch reads the object of ref and checks its hash.
func fetch(ctx context.Context, client ObjectGetter, ref DataRef) ([]byte, error) {
	bucket, key, ok := strings.Cut(strings.TrimPrefix(ref.URI, "s3://"), "/")
	if !ok || !strings.HasPrefix(ref.URI, "s3://") || bucket == "" || key == "" {
		return nil, fmt.Errorf("%w: %q is not an s3://bucket/key URI", ErrMalformedEvent, ref.URI)
	}
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", ref.URI, err)
	}
	data, err := io.ReadAll(io.LimitReader(out.Body, maxClaimBytes+1))
	if cerr := out.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ref.URI, err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != ref.SHA256 {
		return nil, fmt.Errorf("%w: %s has SHA-256 %s, but the event says %s", ErrDataIntegrity, ref.URI, got, ref.SHA256)
	}
	return data, nil
}

// resolve fetches the data of a claim-checked event.
func (c *Consumer[T]) resolve(ctx context.Context, e *Event[T]) error {
	if e.DataRef == nil || e.RawData != nil {
		return nil
	}
	if c.objects == nil {
		return fmt.Errorf("event %s keeps its data at %s: give the consumer WithObjectStore to fetch it", e.ID, e.DataRef.URI)
	}
	data, err := fetch(ctx, c.objects, *e.DataRef)
	if err != nil {
		return fmt.Errorf("event %s: %w", e.ID, err)
	}
	return e.setData(data)
}
