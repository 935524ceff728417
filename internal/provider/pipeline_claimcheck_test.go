package provider

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/oklog/ulid/v2"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// blockedAll is how bucket_settings describes a bucket whose public access
// is blocked.
const blockedAll = "BlockPublicAcls=true, BlockPublicPolicy=true, IgnorePublicAcls=true, RestrictPublicBuckets=true"

// TestAccPipeline_claimCheck provisions the claim-check bucket and writes
// events of 1 KiB, 300 KiB and 5 MiB with a writer configured from the
// writer output: the small one arrives whole, the others by reference, and
// their data fetched from the bucket has the published hash; the objects of
// the published events are tagged. The public access block turned off by
// hand shows in the plan with its values and is restored; import reads the
// claim check back; a bucket deleted by hand is recreated; destroy empties
// and deletes the bucket. The reconciler function, with its role's grants,
// sweeps an object whose transaction never committed and reports it.
func TestAccPipeline_claimCheck(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("claimcheck")
	sink := e.NewQueue(e.Name("acc-claims"), nil)
	bucket := f.name + "-claims"
	objects := s3.NewFromConfig(e.Cfg)
	before := e.Snapshot()
	config := e.PipelineConfig(f.name, fmt.Sprintf(`
  relay = {
    architecture            = "x86_64"
    batch_size              = 10
    batching_window_seconds = 0
  }
  target = {
    queue_arn = %q
  }
  published = {
    ttl_days = 3
  }
  claim_check = {}`, sink.QueueARN))
	e.run(t, e.CheckDestroy(f.name, before), []resource.TestStep{
		{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("writer.claim_bucket"), knownvalue.StringExact(bucket)),
				statecheck.ExpectKnownValue(accResource, attrPath("claim_check.bucket_arn"), knownvalue.StringExact("arn:aws:s3:::"+bucket)),
				statecheck.ExpectKnownValue(accResource, attrPath("claim_check.bucket_settings.public_access_block"), knownvalue.StringExact(blockedAll)),
			},
			Check: resource.ComposeTestCheckFunc(e.deliverClaimChecked(f, sink, objects), e.reconcilerSweeps(objects, bucket)),
		},
		importStep(config, accResource, f.name),
		{
			PreConfig: func() {
				off := aws.Bool(false)
				e.outOfBand(t, "turning the bucket's public access block off", sdkCall(e.Ctx, objects.PutPublicAccessBlock, &s3.PutPublicAccessBlockInput{
					Bucket: aws.String(bucket), PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{
						BlockPublicAcls: off, IgnorePublicAcls: off, BlockPublicPolicy: off, RestrictPublicBuckets: off},
				}), "public access block off", func() error { return nil })
			},
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
				expectChange{block: "claim_check.bucket_settings", attr: "public_access_block",
					before: "BlockPublicAcls=false, BlockPublicPolicy=false, IgnorePublicAcls=false, RestrictPublicBuckets=false", after: blockedAll},
			}},
			Check: func(*terraform.State) error {
				out, err := objects.GetPublicAccessBlock(e.Ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(bucket)})
				if err != nil {
					return fmt.Errorf("reading the public access block: %w", err)
				}
				if c := out.PublicAccessBlockConfiguration; !aws.ToBool(c.BlockPublicAcls) || !aws.ToBool(c.IgnorePublicAcls) || !aws.ToBool(c.BlockPublicPolicy) || !aws.ToBool(c.RestrictPublicBuckets) {
					return fmt.Errorf("the public access block was not restored: %+v", c)
				}
				return nil
			},
		},
		{
			PreConfig: func() { e.deleteBucket(t, objects, bucket) },
			Config:    config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(accResource, attrPath("claim_check.bucket_arn"), knownvalue.StringExact("arn:aws:s3:::"+bucket)),
			}},
			Check: e.deliverClaimChecked(f, sink, objects),
		},
		emptyPlanStep(config),
	})
}

// deleteBucket empties and deletes a bucket by hand.
func (e *accEnv) deleteBucket(t *testing.T, objects *s3.Client, bucket string) {
	t.Helper()
	list, err := objects.ListObjectsV2(e.Ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list.Contents {
		if _, err := objects.DeleteObject(e.Ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key}); err != nil {
			t.Fatal(err)
		}
	}
	e.outOfBand(t, "deleting the bucket", sdkCall(e.Ctx, objects.DeleteBucket, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}), "bucket gone",
		func() error { return nil })
}

// deliverClaimChecked writes events of 1 KiB, 300 KiB and 5 MiB with the
// writer the state describes and checks what the sink receives.
func (e *accEnv) deliverClaimChecked(f fixture, sink acctest.Sink, objects *s3.Client) resource.TestCheckFunc {
	return func(st *terraform.State) error {
		w, err := outbox.NewWriter(dynamodb.NewFromConfig(e.Cfg), outbox.Table{Name: stateAttr(st, "writer.table_name")},
			outbox.WithClaimCheck(objects, stateAttr(st, "writer.claim_bucket")))
		if err != nil {
			return err
		}
		data := map[string][]byte{}
		var records []outbox.Record
		for i, size := range []int{1 << 10, 300 << 10, 5 << 20} {
			detail, _ := json.Marshal(map[string]string{"pdf": strings.Repeat(string(rune('a'+i)), size)})
			rs, err := w.Write(e.Ctx, nil, outbox.Event{PartitionKey: fmt.Sprintf("invoice-%d", i), Source: "com.example.billing", DetailType: "InvoiceIssued", Detail: detail})
			if err != nil {
				return fmt.Errorf("writing the %d-byte event: %w", size, err)
			}
			data[rs[0].EventID] = detail
			records = append(records, rs...)
		}
		if records[0].DataRef != nil || records[1].DataRef == nil || records[2].DataRef == nil {
			return fmt.Errorf("claim-checked: 1 KiB %v, 300 KiB %v, 5 MiB %v; want the two larger ones", records[0].DataRef != nil, records[1].DataRef != nil, records[2].DataRef != nil)
		}
		got, err := receiveBodies(sink, records)
		if err != nil {
			return err
		}
		// The events of this step: an earlier step's messages, received
		// and not deleted, come back after their visibility timeout.
		for _, r := range records {
			if err := checkClaimedBody(e.Ctx, objects, got[r.EventID], data[r.EventID]); err != nil {
				return fmt.Errorf("event %s: %w", r.EventID, err)
			}
		}
		return e.waitTaggedPublished(objects, records[1:])
	}
}

// publishedBody is what the queue receives of an event.
type publishedBody struct {
	ID     string `json:"id"`
	Detail struct {
		Metadata outbox.Metadata `json:"metadata"`
		Data     json.RawMessage `json:"data"`
	} `json:"detail"`
}

// receiveBodies drains the queue until every record's event arrived.
func receiveBodies(sink acctest.Sink, want []outbox.Record) (map[string]publishedBody, error) {
	got := map[string]publishedBody{}
	err := sink.Drain("receiving the claim-checked events", want, func(m sqstypes.Message) (string, error) {
		var b publishedBody
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &b); err != nil {
			return "", fmt.Errorf("message %.200q: %w", aws.ToString(m.Body), err)
		}
		got[b.Detail.Metadata.EventID] = b
		return b.Detail.Metadata.EventID, nil
	})
	return got, err
}

// checkClaimedBody checks that a message carries the data written: whole,
// or as a reference to an object whose content has the published hash.
func checkClaimedBody(ctx context.Context, objects *s3.Client, b publishedBody, want []byte) error {
	ref := b.Detail.Metadata.DataRef
	if ref == nil {
		if string(b.Detail.Data) != string(want) {
			return fmt.Errorf("data of %d bytes, want the %d written", len(b.Detail.Data), len(want))
		}
		return nil
	}
	if len(b.Detail.Data) > 0 || ref.Size != int64(len(want)) {
		return fmt.Errorf("dataRef %+v with data %d bytes; want a reference to the %d bytes written alone", ref, len(b.Detail.Data), len(want))
	}
	return fetchClaimed(ctx, objects, ref.URI, ref.SHA256, want)
}

// fetchClaimed fetches the object of a published reference (an S3 URI)
// and checks that its content has the published SHA-256, is the data
// written and is encrypted.
func fetchClaimed(ctx context.Context, objects *s3.Client, uri, sha string, want []byte) error {
	bucket, key, ok := strings.Cut(strings.TrimPrefix(uri, "s3://"), "/")
	if !ok || !strings.HasPrefix(uri, "s3://") {
		return fmt.Errorf("the reference %q is not an s3://bucket/key URI", uri)
	}
	out, err := objects.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return fmt.Errorf("fetching %s: %w", uri, err)
	}
	body, err := io.ReadAll(out.Body)
	if cerr := out.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", uri, err)
	}
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != sha || string(body) != string(want) {
		return fmt.Errorf("the object %s of %d bytes does not match its published SHA-256 %s or the data written (%d bytes)", uri, len(body), sha, len(want))
	}
	if out.ServerSideEncryption == "" {
		return fmt.Errorf("%s is not encrypted", uri)
	}
	return nil
}

// waitTaggedPublished waits until the relay tagged the objects of the
// records published.
func (e *accEnv) waitTaggedPublished(objects *s3.Client, records []outbox.Record) error {
	return acctest.Wait(e.Ctx, "the relay tagging the published objects", func() error {
		for _, r := range records {
			out, err := objects.GetObjectTagging(e.Ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(r.DataRef.Bucket), Key: aws.String(r.DataRef.Key)})
			if err != nil {
				return err
			}
			tagged := false
			for _, tag := range out.TagSet {
				tagged = tagged || (aws.ToString(tag.Key) == outbox.ClaimStateTag && aws.ToString(tag.Value) == outbox.ClaimStatePublished)
			}
			if !tagged {
				return fmt.Errorf("%s is not tagged %s=%s", r.DataRef.URI(), outbox.ClaimStateTag, outbox.ClaimStatePublished)
			}
		}
		return nil
	})
}

// reconcilerSweeps puts an object as a writer would have an hour ago for a
// transaction that never committed, invokes the reconciler function and
// checks that its sweep removed it and said so.
func (e *accEnv) reconcilerSweeps(objects *s3.Client, bucket string) resource.TestCheckFunc {
	return func(st *terraform.State) error {
		id := ulid.MustNew(ulid.Timestamp(time.Now().Add(-time.Hour)), rand.Reader).String()
		key := outbox.ClaimObjectPrefix + id
		if _, err := objects.PutObject(e.Ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(`{"never":"committed"}`),
			Metadata: map[string]string{outbox.ClaimMetaPartitionKey: "OUTBOX%23" + id, outbox.ClaimMetaSortKey: "OUTBOX%23" + id}}); err != nil {
			return fmt.Errorf("putting an uncommitted object: %w", err)
		}
		payload, err := e.invokeReconciler(stateAttr(st, "reconciler_function_arn"), `{"action":"reconcile"}`)
		if err != nil {
			return err
		}
		var rep struct {
			Claims *struct {
				Examined, Removed int
				Error             string
			} `json:"claims"`
		}
		if err := json.Unmarshal(payload, &rep); err != nil {
			return fmt.Errorf("the reconciler's report %s: %w", payload, err)
		}
		if rep.Claims == nil {
			return fmt.Errorf("the reconciler's report %s: want its sweep's counts", payload)
		}
		if rep.Claims.Removed != 1 || rep.Claims.Error != "" {
			return fmt.Errorf("the sweep reported %+v, want the uncommitted object removed", *rep.Claims)
		}
		if _, err := objects.HeadObject(e.Ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err == nil {
			return fmt.Errorf("s3://%s/%s is still there after the sweep", bucket, key)
		}
		return nil
	}
}
