// Package claimsweep removes the claim-checked objects whose transaction
// never committed: the writer stores an event's data in S3 before the
// transaction that writes its item, and a transaction that fails or is
// cancelled leaves the object behind. The reconciler runs a Sweep each
// period.
//
// An object is removed only when it is older than the grace period (its
// transaction can no longer be under way), its item does not exist (read
// consistently), and it is not tagged published (the relay tags the object
// of every event it published, before it deletes the item in delete mode).
// Everything else is kept; published objects expire by the bucket's
// lifecycle rule. The object keys begin with the event's ULID, so each sweep
// lists only the objects written in its window, from Grace+Window ago to
// Grace ago: with a Window of at least twice the reconciler's period every
// object is examined at least once, and none is listed again and again.
package claimsweep

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/oklog/ulid/v2"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// S3API is the part of the S3 client a sweep uses.
type S3API interface {
	s3.ListObjectsV2APIClient
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, opts ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	GetObjectTagging(ctx context.Context, in *s3.GetObjectTaggingInput, opts ...func(*s3.Options)) (*s3.GetObjectTaggingOutput, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

// ItemGetter is the part of the DynamoDB client a sweep uses.
type ItemGetter interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// Defaults of a Sweeper.
const (
	DefaultGrace  = 15 * time.Minute
	DefaultWindow = 2 * time.Hour
)

// Sweeper sweeps one pipeline's bucket.
type Sweeper struct {
	S3     S3API
	Items  ItemGetter
	Table  outbox.Table
	Bucket string
	// Grace is the age under which an object is left alone; Window how far
	// before that a sweep looks. Zero means the defaults.
	Grace, Window time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Result counts what a sweep did.
type Result struct {
	// Examined objects; Removed those without an item; Kept the others.
	Examined, Removed, Kept int
}

// Sweep removes the uncommitted objects of its window.
func (s Sweeper) Sweep(ctx context.Context) (Result, error) {
	from, to := s.window()
	pages := s3.NewListObjectsV2Paginator(s.S3, &s3.ListObjectsV2Input{Bucket: aws.String(s.Bucket),
		Prefix: aws.String(outbox.ClaimObjectPrefix), StartAfter: aws.String(from)})
	var res Result
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return res, fmt.Errorf("listing s3://%s/%s: %w", s.Bucket, outbox.ClaimObjectPrefix, err)
		}
		for _, o := range page.Contents {
			if aws.ToString(o.Key) >= to {
				return res, nil
			}
			removed, err := s.sweepObject(ctx, aws.ToString(o.Key))
			if err != nil {
				return res, err
			}
			res.Examined++
			if removed {
				res.Removed++
			} else {
				res.Kept++
			}
		}
	}
	return res, nil
}

// window is the range of keys a sweep examines: from the ULID of
// Grace+Window ago to that of Grace ago.
func (s Sweeper) window() (from, to string) {
	now, grace, window := time.Now, cmpOr(s.Grace, DefaultGrace), cmpOr(s.Window, DefaultWindow)
	if s.Now != nil {
		now = s.Now
	}
	end := now().Add(-grace)
	return outbox.ClaimObjectPrefix + timeULID(end.Add(-window)), outbox.ClaimObjectPrefix + timeULID(end)
}

func cmpOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// timeULID is the smallest ULID of t's millisecond.
func timeULID(t time.Time) string {
	var id ulid.ULID
	if err := id.SetTime(ulid.Timestamp(t)); err != nil {
		panic(err) // a time after 10889 AD
	}
	return id.String()
}

// sweepObject removes the object of key when it is uncommitted.
func (s Sweeper) sweepObject(ctx context.Context, key string) (bool, error) {
	head, err := s.S3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(key)})
	if err != nil {
		return false, fmt.Errorf("reading s3://%s/%s: %w", s.Bucket, key, err)
	}
	itemKey, ok := s.itemKey(head.Metadata)
	if !ok {
		return false, nil // not an object of the writer's
	}
	exists, err := s.itemExists(ctx, itemKey)
	if err != nil || exists {
		return false, err
	}
	if published, err := s.published(ctx, key); err != nil || published {
		return false, err
	}
	if _, err := s.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(key)}); err != nil {
		return false, fmt.Errorf("removing the uncommitted s3://%s/%s: %w", s.Bucket, key, err)
	}
	return true, nil
}

// itemKey is the key of the item an object's metadata names.
func (s Sweeper) itemKey(meta map[string]string) (map[string]types.AttributeValue, bool) {
	pk, err1 := url.PathUnescape(meta[outbox.ClaimMetaPartitionKey])
	sk, err2 := url.PathUnescape(meta[outbox.ClaimMetaSortKey])
	if pk == "" || sk == "" || errors.Join(err1, err2) != nil {
		return nil, false
	}
	return map[string]types.AttributeValue{
		s.Table.PartitionKey: &types.AttributeValueMemberS{Value: pk},
		s.Table.SortKey:      &types.AttributeValueMemberS{Value: sk},
	}, true
}

func (s Sweeper) itemExists(ctx context.Context, key map[string]types.AttributeValue) (bool, error) {
	out, err := s.Items.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table.Name), Key: key, ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("#pk"), ExpressionAttributeNames: map[string]string{"#pk": s.Table.PartitionKey}})
	if err != nil {
		return false, fmt.Errorf("reading the item of a claim-checked object in %s: %w", s.Table.Name, err)
	}
	return len(out.Item) > 0, nil
}

func (s Sweeper) published(ctx context.Context, key string) (bool, error) {
	out, err := s.S3.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(s.Bucket), Key: aws.String(key)})
	if err != nil {
		return false, fmt.Errorf("reading the tags of s3://%s/%s: %w", s.Bucket, key, err)
	}
	for _, t := range out.TagSet {
		if aws.ToString(t.Key) == outbox.ClaimStateTag && aws.ToString(t.Value) == outbox.ClaimStatePublished {
			return true, nil
		}
	}
	return false, nil
}
