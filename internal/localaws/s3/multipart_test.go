package s3_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	locals3 "github.com/outboxkit/terraform-provider-outbox/internal/localaws/s3"
)

func uploadParts(t *testing.T, c *s3.Client, key string, parts ...[]byte) (string, []types.CompletedPart) {
	t.Helper()
	ctx := context.Background()
	mu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("parts"), Key: aws.String(key),
		ContentType: aws.String("application/pdf"), Tagging: aws.String("state=uncommitted")})
	if err != nil {
		t.Fatal(err)
	}
	var done []types.CompletedPart
	for i, p := range parts {
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("parts"), Key: aws.String(key), UploadId: mu.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		if err != nil {
			t.Fatalf("UploadPart %d: %v", i+1, err)
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag})
	}
	return aws.ToString(mu.UploadId), done
}

func TestMultipartUpload(t *testing.T) {
	t.Parallel()
	c, ctx := newBucket(t, "parts")
	first, last := bytes.Repeat([]byte("a"), 5<<20), []byte("tail")
	id, parts := uploadParts(t, c, "doc.pdf", first, last)
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("parts"), Key: aws.String("doc.pdf")}); localawstest.ErrorCode(err) != "NotFound" {
		t.Fatalf("HeadObject before CompleteMultipartUpload = %v, want NotFound", err)
	}
	wrong := []types.CompletedPart{parts[0], {PartNumber: aws.Int32(2), ETag: aws.String(`"00000000000000000000000000000000"`)}}
	_, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("parts"), Key: aws.String("doc.pdf"), UploadId: &id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: wrong}})
	wantCode(t, err, "InvalidPart", 400)
	out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("parts"), Key: aws.String("doc.pdf"), UploadId: &id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil || !strings.HasSuffix(aws.ToString(out.ETag), `-2"`) {
		t.Fatalf("CompleteMultipartUpload = %+v, %v", out, err)
	}
	body, got := read(t, c, &s3.GetObjectInput{Bucket: aws.String("parts"), Key: aws.String("doc.pdf")})
	if !bytes.Equal(body, append(first, last...)) || aws.ToString(got.ContentType) != "application/pdf" || aws.ToInt32(got.TagCount) != 1 {
		t.Fatalf("GetObject of the completed upload: %d bytes, %+v", len(body), got)
	}
	_, err = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("parts"), Key: aws.String("doc.pdf"), UploadId: &id})
	wantCode(t, err, "NoSuchUpload", 404)
	small, parts := uploadParts(t, c, "small", []byte("x"), []byte("y"))
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("parts"), Key: aws.String("small"), UploadId: &small,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	wantCode(t, err, "EntityTooSmall", 400)
	if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("parts"), Key: aws.String("small"), UploadId: &small}); err != nil {
		t.Fatal(err)
	}
	_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("parts"), Key: aws.String("small"), UploadId: &small,
		PartNumber: aws.Int32(1), Body: strings.NewReader("z")})
	wantCode(t, err, "NoSuchUpload", 404)
}

// TestLifecycleAbortsIncompleteUploads: AbortIncompleteMultipartUpload
// aborts an upload at the midnight UTC after its initiation plus the days.
func TestLifecycleAbortsIncompleteUploads(t *testing.T) {
	t.Parallel()
	clk := localawstest.NewClock(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	s := localawstest.StartEmpty(t)
	s.Env().Now = clk.Now
	svc := locals3.New(s.Env(), locals3.Options{LifecycleSweepInterval: -1})
	localawstest.Serve(t, s, svc)
	c, ctx := client(s), context.Background()
	mustBucket(t, c, "parts")
	if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String("parts"),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{{ID: aws.String("abort"),
			Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")},
			AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(2)}}}}}); err != nil {
		t.Fatal(err)
	}
	id, _ := uploadParts(t, c, "stale", []byte("x"))
	part := func() error {
		_, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("parts"), Key: aws.String("stale"), UploadId: &id,
			PartNumber: aws.Int32(2), Body: strings.NewReader("y")})
		return err
	}
	clk.Advance(61 * time.Hour) // 2026-03-03 23:00, before the midnight after two days.
	svc.SweepLifecycle()
	if err := part(); err != nil {
		t.Fatalf("UploadPart before the abort: %v", err)
	}
	clk.Advance(time.Hour)
	svc.SweepLifecycle()
	wantCode(t, part(), "NoSuchUpload", 404)
}
