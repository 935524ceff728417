package s3_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// TestControl: buckets are in GET /_localaws/resources, and a fault
// injected into PutObject reaches the SDK as S3's XML error.
func TestControl(t *testing.T) {
	t.Parallel()
	s := localawstest.Start(t)
	c, ctx := client(s, func(o *s3.Options) { o.RetryMaxAttempts = 1 }), context.Background()
	mustBucket(t, c, "listed")
	ctl := localawstest.Control(s)
	res, err := ctl.Resources(ctx)
	if err != nil || !slices.Contains(res["s3"], "arn:aws:s3:::listed") {
		t.Fatalf("resources = %v, %v", res["s3"], err)
	}
	if _, err := ctl.AddFault(ctx, control.FaultRule{Service: "s3", Operation: "PutObject", Code: "SlowDown", HTTPStatus: 503, Count: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("listed"), Key: aws.String("k"), Body: strings.NewReader("x")})
	wantCode(t, err, "SlowDown", 503)
	put(t, c, &s3.PutObjectInput{Bucket: aws.String("listed"), Key: aws.String("k"), Body: strings.NewReader("x")})
}
