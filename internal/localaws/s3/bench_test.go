package s3_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// BenchmarkPutGet10MB puts and gets a 10 MB object through the SDK, with
// the SDK's default CRC32 on the put and checksum validation on the get.
func BenchmarkPutGet10MB(b *testing.B) {
	s := localawstest.Start(b)
	c, ctx := client(s), context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bench")}); err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789"), 1<<20)
	b.SetBytes(int64(2 * len(data)))
	for b.Loop() {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bench"), Key: aws.String("big"), Body: bytes.NewReader(data)}); err != nil {
			b.Fatal(err)
		}
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bench"), Key: aws.String("big")})
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, out.Body)
		_ = out.Body.Close()
		if err != nil || n != int64(len(data)) {
			b.Fatalf("read %d bytes, %v", n, err)
		}
	}
}
