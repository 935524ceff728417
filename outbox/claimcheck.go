package outbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Claim check. An event whose published form would exceed what its target
// takes (TargetLimits, MaxEntryBytes without WithTarget), or whose item
// would exceed DynamoDB's (MaxItemBytes), keeps its data in S3: Write stores the
// data as an object first, with its SHA-256 and server-side encryption,
// then writes the item with a reference to it (AttrDataRef) instead of the
// detail, in the caller's transaction. The relay publishes the event
// inline (Record.Inline) when the data, read back and checked against the
// reference, fits the target kind's message; otherwise it publishes the
// reference (metadata.dataRef, a CloudEvent's dataref), and the consumer
// fetches the object and checks its hash. An object whose transaction
// never committed has no item; the pipeline's sweep removes it.

// AttrDataRef is the item's reference to data stored in S3, a map of
// bucket, key, sha256 (hex) and size (bytes); the item then has no
// AttrDetail.
const AttrDataRef = "dataRef"

// MaxClaimBytes is the largest data of a claim-checked event: 10 MiB.
const MaxClaimBytes = 10 << 20

// ClaimObjectPrefix starts the key of every claim-checked object; the
// event id follows, so that keys sort by the time of writing.
const ClaimObjectPrefix = "outbox/"

// Metadata of a claim-checked object: the item's key, URL-escaped, so that
// a sweep can tell whether its transaction committed.
const (
	ClaimMetaPartitionKey = "outbox-partition-key"
	ClaimMetaSortKey      = "outbox-sort-key"
)

// The tag the relay puts on a claim-checked object once its event is
// published: the bucket's lifecycle rule expires tagged objects with the
// items' TTL, and the sweep never removes a tagged one, even when its item
// is gone (deleted once published).
const (
	ClaimStateTag       = "outbox-state"
	ClaimStatePublished = "published"
)

// DataRef is where a claim-checked event's data is.
type DataRef struct {
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	// SHA256 is the data's SHA-256, in hex.
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// URI is the reference as an S3 URI, s3://bucket/key.
func (d DataRef) URI() string { return "s3://" + d.Bucket + "/" + d.Key }

// ErrDataMismatch is the error of data that is not what its reference
// describes: its size or SHA-256 differ.
var ErrDataMismatch = errors.New("outbox: the claim-checked data does not match its reference")

// Verify fails with ErrDataMismatch when data is not what d describes.
func (d DataRef) Verify(data []byte) error {
	if int64(len(data)) != d.Size {
		return fmt.Errorf("%w: %s holds %d bytes, but the reference says %d", ErrDataMismatch, d.URI(), len(data), d.Size)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != d.SHA256 {
		return fmt.Errorf("%w: %s has SHA-256 %s, but the reference says %s", ErrDataMismatch, d.URI(), got, d.SHA256)
	}
	return nil
}

// Inline returns r, a claim-checked event, with data, its reference's
// object, in place of the reference: the record as it would be had it
// been written whole, so that it publishes the same. It fails with
// ErrDataMismatch when data is not what the reference describes, and
// when r has no reference.
func (r Record) Inline(data []byte) (Record, error) {
	if r.DataRef == nil {
		return Record{}, fmt.Errorf("%w: event %s has no reference", ErrDataMismatch, r.EventID)
	}
	if err := r.DataRef.Verify(data); err != nil {
		return Record{}, err
	}
	r.Detail, r.DataRef = data, nil
	return r, nil
}

// ObjectPutter is the part of the S3 client a claim-checking Writer uses.
// *s3.Client has it.
type ObjectPutter interface {
	PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error)
}

// claimCheck is the Writer's claim check settings.
type claimCheck struct {
	client ObjectPutter
	bucket string
	// threshold is WithClaimThreshold's; 0 for the target's limit.
	threshold int
	kmsKeyARN string
}

// ClaimCheckOption configures the claim check.
type ClaimCheckOption func(*claimCheck)

// WithClaimThreshold stores in S3 the data of every event whose published
// form would be larger than bytes (by default, and at most, the Writer's
// target's limit, or what its item can hold): a lower threshold keeps
// items small, at one S3 request per large event.
func WithClaimThreshold(bytes int) ClaimCheckOption {
	return func(c *claimCheck) { c.threshold = max(bytes, 1) }
}

// WithClaimKMSKey encrypts the objects with the KMS key (SSE-KMS) instead
// of S3's own keys (SSE-S3).
func WithClaimKMSKey(arn string) ClaimCheckOption {
	return func(c *claimCheck) { c.kmsKeyARN = arn }
}

// WithClaimCheck makes Write store in bucket the data of the events too
// large to publish whole, up to MaxClaimBytes. Put, Actions and
// ActionsAfter take no context and make no call: they refuse such events.
func WithClaimCheck(client ObjectPutter, bucket string, opts ...ClaimCheckOption) WriterOption {
	return func(w *Writer) {
		c := &claimCheck{client: client, bucket: bucket}
		for _, o := range opts {
			o(c)
		}
		w.claim = c
	}
}

// needsClaim reports whether w must keep r's data in S3.
func (w *Writer) needsClaim(r Record) bool {
	return w.claim != nil && r.DataRef == nil && !w.fits(r, w.claim.threshold)
}

// store puts r's data in S3 and returns r with its reference instead.
func (c *claimCheck) store(ctx context.Context, r Record, index int) (Record, error) {
	if len(r.Detail) > MaxClaimBytes {
		return Record{}, &EventError{Index: index, Field: "Detail", Err: ErrEventTooLarge,
			Fix: fmt.Sprintf("the data is %d bytes; keep it under %d (10 MiB), or store it yourself and publish its location", len(r.Detail), MaxClaimBytes)}
	}
	sum := sha256.Sum256(r.Detail)
	ref := &DataRef{Bucket: c.bucket, Key: ClaimObjectPrefix + r.EventID, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(r.Detail))}
	in := &s3.PutObjectInput{
		Bucket: aws.String(ref.Bucket), Key: aws.String(ref.Key), Body: bytes.NewReader(r.Detail),
		ContentType: aws.String("application/json"), ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum[:])),
		ServerSideEncryption: s3types.ServerSideEncryptionAes256,
		Metadata:             map[string]string{ClaimMetaPartitionKey: url.PathEscape(r.PartitionKey), ClaimMetaSortKey: url.PathEscape(r.SortKey)},
	}
	if c.kmsKeyARN != "" {
		in.ServerSideEncryption, in.SSEKMSKeyId = s3types.ServerSideEncryptionAwsKms, aws.String(c.kmsKeyARN)
	}
	if _, err := c.client.PutObject(ctx, in); err != nil {
		return Record{}, fmt.Errorf("storing the data of event %d (%s, %d bytes) in s3://%s: %w", index, r.EventID, len(r.Detail), c.bucket, err)
	}
	r.DataRef, r.Detail = ref, nil
	return r, nil
}

// storeClaims stores the data of the records that need it.
func (w *Writer) storeClaims(ctx context.Context, records []Record) error {
	for i, r := range records {
		if !w.needsClaim(r) {
			continue
		}
		stored, err := w.claim.store(ctx, r, i)
		if err != nil {
			return err
		}
		records[i] = stored
	}
	return nil
}

// dataRefValue is the item attribute of a reference.
func dataRefValue(d DataRef) types.AttributeValue {
	return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"bucket": stringValue(d.Bucket), "key": stringValue(d.Key), "sha256": stringValue(d.SHA256), "size": numberValue(d.Size),
	}}
}

// parseDataRef reads the item's reference; nil when it has none.
func parseDataRef(item map[string]types.AttributeValue) (*DataRef, error) {
	v, ok := item[AttrDataRef]
	if !ok {
		return nil, nil
	}
	m, ok := v.(*types.AttributeValueMemberM)
	if !ok {
		return nil, &RecordError{Attribute: AttrDataRef, Problem: "is not a map"}
	}
	p := itemParser{item: m.Value}
	d := &DataRef{Bucket: p.str("bucket", true), Key: p.str("key", true), SHA256: p.str("sha256", true), Size: p.num("size")}
	if p.err != nil {
		return nil, &RecordError{Attribute: AttrDataRef, Problem: p.err.Error()}
	}
	return d, nil
}
