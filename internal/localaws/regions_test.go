package localaws_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

const otherRegion = "eu-west-1"

// TestRegionsKeepTheirResources checks that a table and a queue belong to
// the Region whose signature created them: another Region does not see
// them, may create its own of the same name, and every ARN names the
// Region; IAM is global.
func TestRegionsKeepTheirResources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t)
	home, away := localawstest.Config(s), localawstest.RegionConfig(s, otherRegion)
	ddbHome, ddbAway := dynamodb.NewFromConfig(home), dynamodb.NewFromConfig(away)
	if _, err := ddbHome.CreateTable(ctx, localawstest.TableInput("orders", "pk", "", "")); err != nil {
		t.Fatal(err)
	}
	_, err := ddbAway.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("orders")})
	localawstest.WantError[*ddbtypes.ResourceNotFoundException](t, err, "DescribeTable of a us-east-1 table from eu-west-1")
	out, err := ddbAway.CreateTable(ctx, localawstest.TableInput("orders", "pk", "", ddbtypes.StreamViewTypeNewAndOldImages))
	if err != nil {
		t.Fatal(err)
	}
	if arn := aws.ToString(out.TableDescription.TableArn); arn != "arn:aws:dynamodb:eu-west-1:000000000000:table/orders" {
		t.Errorf("eu-west-1 table ARN %s", arn)
	}
	if arn := aws.ToString(out.TableDescription.LatestStreamArn); !strings.HasPrefix(arn, "arn:aws:dynamodb:eu-west-1:") {
		t.Errorf("eu-west-1 stream ARN %s", arn)
	}
	home1, err := ddbHome.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("orders")})
	if err != nil || home1.Table.StreamSpecification != nil {
		t.Fatalf("the us-east-1 table after eu-west-1 made its own: %+v, %v", home1, err)
	}
	q, err := sqs.NewFromConfig(away).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("q")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqs.NewFromConfig(home).GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("q")}); err == nil {
		t.Error("us-east-1 finds eu-west-1's queue")
	}
	attrs, err := sqs.NewFromConfig(away).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil || attrs.Attributes["QueueArn"] != "arn:aws:sqs:eu-west-1:000000000000:q" {
		t.Errorf("eu-west-1 queue attributes %v, %v", attrs, err)
	}
	inv := localawstest.Inventory(ctx, t, localawstest.Control(s))
	if !slices.Contains(inv["dynamodb"], "arn:aws:dynamodb:eu-west-1:000000000000:table/orders") ||
		!slices.Contains(inv["dynamodb"], "arn:aws:dynamodb:us-east-1:000000000000:table/orders") ||
		!slices.Contains(inv["sqs"], "arn:aws:sqs:eu-west-1:000000000000:q") {
		t.Errorf("the resources of both Regions are not listed: %v", inv)
	}
	if _, err := iam.NewFromConfig(home).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("r"),
		AssumeRolePolicyDocument: aws.String(localawstest.TrustPolicy("lambda.amazonaws.com"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := iam.NewFromConfig(away).GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("r")}); err != nil {
		t.Errorf("IAM is global, but eu-west-1 does not see the role: %v", err)
	}
}

// TestRegionsS3BucketRegion checks that S3 bucket names are global and each
// bucket keeps the Region it was created in.
func TestRegionsS3BucketRegion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t)
	away := s3.NewFromConfig(localawstest.RegionConfig(s, otherRegion), func(o *s3.Options) { o.UsePathStyle = true })
	home := s3.NewFromConfig(localawstest.Config(s), func(o *s3.Options) { o.UsePathStyle = true })
	_, err := away.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("regional-bucket")})
	localawstest.WantCode(t, err, "IllegalLocationConstraintException", "CreateBucket in eu-west-1 without a constraint")
	if _, err := away.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("regional-bucket"),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: otherRegion}}); err != nil {
		t.Fatal(err)
	}
	loc, err := home.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: aws.String("regional-bucket")})
	if err != nil || loc.LocationConstraint != otherRegion {
		t.Fatalf("GetBucketLocation through us-east-1: %+v, %v", loc, err)
	}
}

// TestRegionsSNSDeliversToAnotherRegion subscribes a queue of eu-west-1 to a
// topic of us-east-1, which SNS allows, and receives what the topic
// publishes.
func TestRegionsSNSDeliversToAnotherRegion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t)
	topics := sns.NewFromConfig(localawstest.Config(s))
	queues := sqs.NewFromConfig(localawstest.RegionConfig(s, otherRegion))
	topic, err := topics.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	arn := "arn:aws:sqs:eu-west-1:000000000000:q"
	q, err := queues.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("q"),
		Attributes: map[string]string{"Policy": localawstest.SendMessagePolicy("sns.amazonaws.com", arn, aws.ToString(topic.TopicArn))}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topics.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(arn),
		Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := topics.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("across")}); err != nil {
		t.Fatal(err)
	}
	out, err := queues.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 10})
	if err != nil || len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "across" {
		t.Fatalf("eu-west-1 queue received %+v, %v; want the message", out, err)
	}
}

// TestRegionsPresignedAndUnsigned checks that a presigned
// URL's credential scope names the Region like a signature's, and that an
// unsigned request is the default Region's.
func TestRegionsPresignedAndUnsigned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t)
	away := dynamodb.NewFromConfig(localawstest.RegionConfig(s, otherRegion))
	if _, err := away.CreateTable(ctx, localawstest.TableInput("only-eu", "pk", "", "")); err != nil {
		t.Fatal(err)
	}
	body := `{"TableName":"only-eu"}`
	for _, c := range []struct {
		query string
		want  int
	}{
		{"", http.StatusBadRequest},
		{"?X-Amz-Credential=" + "AKID%2F20260101%2Feu-west-1%2Fdynamodb%2Faws4_request", http.StatusOK},
		{"?X-Amz-Credential=" + "AKID%2F20260101%2Fus-east-1%2Fdynamodb%2Faws4_request", http.StatusBadRequest},
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint()+"/"+c.query, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.DescribeTable")
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("DescribeTable of an eu-west-1 table with query %q: status %d, want %d", c.query, resp.StatusCode, c.want)
		}
	}
	if _, err := s.Region("local"); err == nil {
		t.Errorf("%q accepted as a Region", "local")
	}
}

// TestRegionsFunctionCode checks that a function of another Region is
// served there and that its Code.Location downloads its zip: the URL names
// the function's Region for the control routes.
func TestRegionsFunctionCode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t)
	away := localawstest.RegionConfig(s, otherRegion)
	role, err := iam.NewFromConfig(away).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("fn-away"),
		AssumeRolePolicyDocument: aws.String(localawstest.TrustPolicy("lambda.amazonaws.com"))})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	if w, err := zw.Create("bootstrap"); err != nil {
		t.Fatal(err)
	} else if _, err := w.Write([]byte("#!/bin/sh\n")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	lam := lambda.NewFromConfig(away)
	err = localawstest.RetryIAM(func() error {
		_, err := lam.CreateFunction(ctx, &lambda.CreateFunctionInput{FunctionName: aws.String("away"), Role: role.Role.Arn,
			Runtime: lambdatypes.RuntimeProvidedal2023, Handler: aws.String("bootstrap"), Code: &lambdatypes.FunctionCode{ZipFile: buf.Bytes()}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lambda.NewFromConfig(localawstest.Config(s)).GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String("away")}); err == nil {
		t.Error("us-east-1 finds eu-west-1's function")
	}
	fn, err := lam.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String("away")})
	if err != nil {
		t.Fatal(err)
	}
	if arn := aws.ToString(fn.Configuration.FunctionArn); arn != "arn:aws:lambda:eu-west-1:000000000000:function:away" {
		t.Errorf("function ARN %s", arn)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, aws.ToString(fn.Code.Location), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	got, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("GET %s: status %d, %d bytes, %v; want the function's zip", aws.ToString(fn.Code.Location), resp.StatusCode, len(got), err)
	}
}
