package outboxpipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// claimCheckOutput is the module's claim_check output.
type claimCheckOutput struct {
	BucketName         *string `json:"bucket_name"`
	BucketARN          *string `json:"bucket_arn"`
	KMSKeyARN          *string `json:"kms_key_arn"`
	WriterPolicyJSON   *string `json:"writer_policy_json"`
	ConsumerPolicyJSON *string `json:"consumer_policy_json"`
}

// TestAccModuleClaimCheck applies the module with claim_check = {} and an
// SQS queue as target: the bucket <name>-claims exists with its public
// access blocked; the claim_check output names it, with its ARN, no KMS
// key and the writer's and consumer's policies on its outbox/ objects; a
// writer configured from the output stores a 300 KiB event's data in the
// bucket, and the relay publishes the event; the next plan is empty, and
// destroy removes the bucket. A second module call without claim_check has
// an output of nulls.
func TestAccModuleClaimCheck(t *testing.T) {
	tf := acctest.TerraformCLI(t, root)
	e := acctest.New(t)
	sink := e.NewQueue("claimmod-sink", nil)
	objects := s3.NewFromConfig(e.Cfg)
	const bucket = "claimmod-claims"
	t.Cleanup(func() { // runs after the destroy, registered later
		if _, err := objects.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err == nil {
			t.Errorf("the bucket %s is still there after destroy", bucket)
		}
	})
	config := requiredOutbox + fmt.Sprintf(`
module "p" {
  source      = "../modules/outbox-pipeline"
  name        = "claimmod"
  queue_arn   = %q
  claim_check = {}
  `+fastRelay+`
}

module "plain" {
  source = "../modules/outbox-pipeline"
  name   = "claimmod-plain"
  relay  = { architecture = "x86_64" }
  alarms = null
}

output "writer_table" {
  value = module.p.writer_table
}

output "claim_check" {
  value = module.p.claim_check
}

output "plain_claim_check" {
  value = module.plain.claim_check
}
`, sink.QueueARN)
	run := applyStaged(e, tf, "claims", map[string]string{"main.tf": config}, nil)

	var cc, plain claimCheckOutput
	for name, v := range map[string]any{"claim_check": &cc, "plain_claim_check": &plain} {
		if err := run.OutputInto(e.Ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	checkClaimCheckOutput(t, cc, bucket)
	if plain != (claimCheckOutput{}) {
		t.Errorf("claim_check of a pipeline without one = %+v, want every attribute null", plain)
	}
	checkBucketBlocked(e, objects, bucket)

	table := writerTable(e, run)
	w, err := outbox.NewWriter(dynamodb.NewFromConfig(e.Cfg), table, outbox.WithClaimCheck(objects, *cc.BucketName))
	if err != nil {
		t.Fatal(err)
	}
	detail, _ := json.Marshal(map[string]string{"pdf": strings.Repeat("x", 300<<10)})
	records, err := w.Write(e.Ctx, nil, outbox.Event{PartitionKey: "invoice-1", Source: "com.example.billing", DetailType: "InvoiceIssued", Detail: detail})
	if err != nil {
		t.Fatal(err)
	}
	ref := records[0].DataRef
	if ref == nil || ref.Bucket != bucket {
		t.Fatalf("the 300 KiB event's reference is %+v, want an object in %s", ref, bucket)
	}
	if _, err := objects.HeadObject(e.Ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(ref.Key)}); err != nil {
		t.Fatalf("the claim-checked object %s: %v", ref.URI(), err)
	}
	if err := e.WaitItems(table, records, "the claim-checked item marked PUBLISHED", acctest.PublishedWithTTL("expiresAt")); err != nil {
		t.Fatal(err)
	}
	checkEmptyPlan(e.Ctx, t, run, "the apply")
}

// checkClaimCheckOutput checks the claim_check output of a pipeline with a
// dedicated bucket and no KMS key: the bucket, its ARN, and policies that
// grant the writer s3:PutObject and the consumer s3:GetObject on its
// outbox/ objects alone.
func checkClaimCheckOutput(t *testing.T, cc claimCheckOutput, bucket string) {
	t.Helper()
	arn := "arn:aws:s3:::" + bucket
	if aws.ToString(cc.BucketName) != bucket || aws.ToString(cc.BucketARN) != arn || cc.KMSKeyARN != nil {
		t.Fatalf("claim_check = bucket %v, ARN %v, key %v; want %s, %s and null", aws.ToString(cc.BucketName), aws.ToString(cc.BucketARN), aws.ToString(cc.KMSKeyARN), bucket, arn)
	}
	for role, c := range map[string]struct {
		policy *string
		action string
	}{"writer": {cc.WriterPolicyJSON, "s3:PutObject"}, "consumer": {cc.ConsumerPolicyJSON, "s3:GetObject"}} {
		var doc struct {
			Statement []struct {
				Action   []string
				Resource []string
			}
		}
		if err := json.Unmarshal([]byte(aws.ToString(c.policy)), &doc); err != nil {
			t.Fatalf("the %s policy %v: %v", role, aws.ToString(c.policy), err)
		}
		if len(doc.Statement) != 1 || fmt.Sprint(doc.Statement[0].Action) != "["+c.action+"]" || fmt.Sprint(doc.Statement[0].Resource) != "["+arn+"/outbox/*]" {
			t.Errorf("the %s policy is %s; want %s on %s/outbox/* alone", role, aws.ToString(c.policy), c.action, arn)
		}
	}
}

// checkBucketBlocked checks that the bucket exists with all of its public
// access blocked.
func checkBucketBlocked(e *acctest.Env, objects *s3.Client, bucket string) {
	e.T.Helper()
	out, err := objects.GetPublicAccessBlock(e.Ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(bucket)})
	if err != nil {
		e.T.Fatalf("the bucket %s: %v", bucket, err)
	}
	if c := out.PublicAccessBlockConfiguration; !aws.ToBool(c.BlockPublicAcls) || !aws.ToBool(c.IgnorePublicAcls) || !aws.ToBool(c.BlockPublicPolicy) || !aws.ToBool(c.RestrictPublicBuckets) {
		e.T.Errorf("the bucket %s's public access is not all blocked: %+v", bucket, c)
	}
}
