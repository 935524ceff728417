package provision

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

var claimServices = append(slices.Clone(coreServices), "s3")

const testClaimKey = "arn:aws:kms:us-east-1:000000000000:key/1234abcd-12ab-34cd-56ef-1234567890ab"

// claimSpec is a pipeline with a claim-check bucket and no reconciler.
func claimSpec(name string, cc ClaimCheckSpec) Spec {
	cc.Enabled = true
	return Spec{Name: name, Reconciler: ReconcilerSpec{Disabled: true}, ClaimCheck: cc, Tags: map[string]string{"team": "media"},
		PublishedTTL: ptr(7 * 24 * time.Hour)}
}

// writeClaimed writes one event large enough to be claim-checked.
func writeClaimed(t *testing.T, ctx context.Context, c *Provisioner, s Spec) outbox.Record {
	t.Helper()
	w, err := outbox.NewWriter(c.DynamoDB, s.WithDefaults().OutboxTable(), outbox.WithClaimCheck(c.S3, s.WithDefaults().ClaimCheck.BucketName))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]string{"image": strings.Repeat("x", 300<<10)})
	recs, err := w.Write(ctx, nil, outbox.Event{PartitionKey: "invoice-1", Source: "billing", DetailType: "InvoiceRendered", Detail: data})
	if err != nil {
		t.Fatalf("writing a claim-checked event: %v", err)
	}
	if recs[0].DataRef == nil {
		t.Fatal("a 300 KiB event was not claim-checked")
	}
	return recs[0]
}

// deleteWithBucket deletes the pipeline of st, what in a failure, and
// checks that its claim-check bucket is gone with it.
func deleteWithBucket(t *testing.T, ctx context.Context, c *Provisioner, st State, what string) {
	t.Helper()
	must.Delete(t, ctx, c, st, what)
	if _, err := c.bucketTags(ctx, st.ClaimBucket); !errors.Is(err, awsops.ErrNotFound) {
		t.Errorf("the bucket %s remains after deleting %s: %v", st.ClaimBucket, what, err)
	}
}

func TestLocalClaimBucketCreatedWithEverySetting(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, claimServices...)
	spec := claimSpec("media", ClaimCheckSpec{KMSKeyARN: testClaimKey})
	st := must.Create(t, ctx, c, spec)
	if st.ClaimBucket != "media-claims" || !st.ClaimBucketOwned || st.ClaimBucketARN != "arn:aws:s3:::media-claims" {
		t.Fatalf("state of the bucket: %q %q owned=%v", st.ClaimBucket, st.ClaimBucketARN, st.ClaimBucketOwned)
	}
	b, err := c.bucketSettings(ctx, st.ClaimBucket)
	if err != nil {
		t.Fatal(err)
	}
	if !allBlocked(b.publicAcc) {
		t.Errorf("public access block = %+v, want all four on", b.publicAcc)
	}
	if e := b.encryption; e == nil || e.ApplyServerSideEncryptionByDefault.SSEAlgorithm != s3types.ServerSideEncryptionAwsKms ||
		aws.ToString(e.ApplyServerSideEncryptionByDefault.KMSMasterKeyID) != testClaimKey || !aws.ToBool(e.BucketKeyEnabled) {
		t.Errorf("encryption = %+v, want SSE-KMS with the key and a bucket key", e)
	}
	if !strings.Contains(b.policy, "aws:SecureTransport") || !strings.Contains(b.policy, `"Deny"`) {
		t.Errorf("policy = %s, want a deny without TLS", b.policy)
	}
	if describeRules(b.rules) != describeRules(spec.WithDefaults().claimLifecycleRules()) || aws.ToInt32(b.rules[0].Expiration.Days) != 7 {
		t.Errorf("lifecycle rules = %+v, want published objects expiring after 7 days and uploads aborted after 1", b.rules)
	}
	if b.tags["team"] != "media" || b.tags[TagPipeline] != "media" {
		t.Errorf("tags = %v", b.tags)
	}
	fn, err := c.getFunction(ctx, st.RelayFunctionName)
	if err != nil {
		t.Fatal(err)
	}
	if got := fn.Configuration.Environment.Variables[config.EnvClaimBucket]; got != "media-claims" {
		t.Errorf("%s = %q, want the bucket", config.EnvClaimBucket, got)
	}
	policy := RelayPolicy(spec, spec.resources(st.account(), st.TableARN, st.QueueARN)).JSON()
	if !strings.Contains(policy, "s3:PutObjectTagging") || !strings.Contains(policy, "arn:aws:s3:::media-claims/outbox/*") {
		t.Errorf("relay policy does not let it tag the objects:\n%s", policy)
	}
	// A TLS-only policy refuses a request without TLS.
	_, err = c.S3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(st.ClaimBucket)}, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue("X-Forwarded-Proto", "http"))
	})
	if err == nil {
		t.Error("a request without TLS was allowed")
	}
	found, fst, err := c.Lookup(ctx, "media")
	if err != nil {
		t.Fatal(err)
	}
	if want := (ClaimCheckSpec{Enabled: true, BucketName: "media-claims", KMSKeyARN: testClaimKey}); found.ClaimCheck != want ||
		fst.ClaimBucket != st.ClaimBucket || fst.ClaimBucketARN != st.ClaimBucketARN || !fst.ClaimBucketOwned {
		t.Errorf("Lookup found %+v, state %q %q owned=%v; want %+v", found.ClaimCheck, fst.ClaimBucket, fst.ClaimBucketARN, fst.ClaimBucketOwned, want)
	}
	deleteWithBucket(t, ctx, c, st, "the pipeline")
}

func TestLocalClaimBucketDriftRepaired(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, claimServices...)
	spec := claimSpec("drift", ClaimCheckSpec{})
	st := must.Create(t, ctx, c, spec)
	b := aws.String(st.ClaimBucket)
	off := aws.Bool(false)
	calls := []error{
		ignoreOut(c.S3.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: b, PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{
			BlockPublicAcls: off, IgnorePublicAcls: off, BlockPublicPolicy: off, RestrictPublicBuckets: off}})),
		ignoreOut(c.S3.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: b})),
		ignoreOut(c.S3.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: b})),
		ignoreOut(c.S3.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: b, ServerSideEncryptionConfiguration: &s3types.ServerSideEncryptionConfiguration{
			Rules: []s3types.ServerSideEncryptionRule{claimEncryptionRule(testClaimKey)}}})),
		ignoreOut(c.S3.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: b, Tagging: &s3types.Tagging{TagSet: s3Tags(map[string]string{"team": "other"})}})),
	}
	if err := errors.Join(calls...); err != nil {
		t.Fatal(err)
	}
	_, d := must.Read(t, ctx, c, spec, st)
	want := []string{"encryption", "lifecycle", "policy", "public_access_block", "tags"}
	if got := changedFields(d, ComponentClaimBucket); !slices.Equal(got, want) {
		t.Fatalf("drift of the bucket = %v, want %v", got, want)
	}
	observed, err := c.ObservedClaimBucket(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	wantSettings := ClaimBucketSettings(spec, st.account())
	t.Logf("observed %v\nwant %v", observed, wantSettings)
	for k, v := range map[string]string{BucketPublicAccessBlock: "BlockPublicAcls=false", BucketPolicy: "none", BucketLifecycle: "none",
		BucketEncryption: "aws:kms with " + testClaimKey, BucketTags: "team=other"} {
		if observed[k] != v && !strings.HasPrefix(observed[k], v) {
			t.Errorf("observed %s = %q, want it to show %q", k, observed[k], v)
		}
	}
	st = must.Update(t, ctx, c, spec, st, "repairing the bucket")
	if repaired, err := c.ObservedClaimBucket(ctx, st); err != nil || !maps.Equal(repaired, wantSettings) {
		t.Errorf("after the repair the bucket is %v (%v), want %v", repaired, err, wantSettings)
	}
	if _, d := must.Read(t, ctx, c, spec, st); len(d.Components()) > 0 {
		t.Errorf("drift after the repair: %+v", d)
	}
	must.Delete(t, ctx, c, st, "the pipeline")
}

func changedFields(d Drift, component string) []string {
	for _, ch := range d.Changed {
		if ch.Component == component {
			return ch.Fields
		}
	}
	return nil
}

func TestLocalClaimBucketAdopted(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, claimServices...)
	own := s3types.LifecycleRule{ID: aws.String("logs"), Status: s3types.ExpirationStatusEnabled,
		Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("logs/")}, Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(90)}}
	b := aws.String("shared-media")
	for _, err := range []error{
		ignoreOut(c.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b})),
		ignoreOut(c.S3.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: b, Tagging: &s3types.Tagging{TagSet: s3Tags(map[string]string{"owner": "media"})}})),
		ignoreOut(c.S3.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: b,
			LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: []s3types.LifecycleRule{own}}})),
		ignoreOut(c.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("logs/a"), Body: strings.NewReader("a")})),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	spec := claimSpec("adopter", ClaimCheckSpec{Existing: true, BucketName: "shared-media"})
	// A new bucket blocks public access; with it turned off, it is refused.
	if _, err := c.S3.DeletePublicAccessBlock(ctx, &s3.DeletePublicAccessBlockInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, spec); err == nil || !strings.Contains(err.Error(), "public access is not blocked") {
		t.Fatalf("adopting a bucket without its public access blocked: %v", err)
	}
	if _, err := c.S3.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: b, PublicAccessBlockConfiguration: &blockAllPublicAccess}); err != nil {
		t.Fatal(err)
	}
	st := must.Create(t, ctx, c, spec)
	have, err := c.bucketSettings(ctx, "shared-media")
	if err != nil {
		t.Fatal(err)
	}
	if st.ClaimBucketOwned || have.tags[TagAdoptedBy] != "adopter" || have.tags["owner"] != "media" || have.policy != "" ||
		have.encryption.ApplyServerSideEncryptionByDefault.SSEAlgorithm != s3types.ServerSideEncryptionAes256 {
		t.Errorf("adopted bucket: owned=%v tags=%v policy=%q encryption=%+v; want tagged, its own settings kept", st.ClaimBucketOwned, have.tags, have.policy, have.encryption)
	}
	if len(have.rules) != 3 || describeRules(outboxRules(have.rules)) != describeRules(spec.WithDefaults().claimLifecycleRules()) {
		t.Errorf("lifecycle rules = %+v, want its own and the pipeline's two", have.rules)
	}
	if _, err := c.Create(ctx, claimSpec("second", ClaimCheckSpec{Existing: true, BucketName: "shared-media"})); err == nil ||
		!strings.Contains(err.Error(), "belongs to the outbox pipeline adopter") {
		t.Errorf("a second pipeline adopted the bucket: %v", err)
	}
	must.Delete(t, ctx, c, st, "the pipeline")
	have, err = c.bucketSettings(ctx, "shared-media")
	if err != nil {
		t.Fatalf("the adopted bucket is gone after delete: %v", err)
	}
	if _, tagged := have.tags[TagAdoptedBy]; tagged || len(have.rules) != 1 || aws.ToString(have.rules[0].ID) != "logs" {
		t.Errorf("released bucket: tags=%v rules=%+v, want its own", have.tags, have.rules)
	}
	if _, err := c.S3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("logs/a")}); err != nil {
		t.Errorf("the adopted bucket's object is gone: %v", err)
	}
}

func TestLocalClaimBucketDestroyGuard(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, claimServices...)
	spec := claimSpec("invoices", ClaimCheckSpec{})
	st := must.Create(t, ctx, c, spec)
	rec := writeClaimed(t, ctx, c, spec)

	// The table's guard stops the destroy, and the bucket keeps the data.
	var undelivered *UndeliveredError
	if _, err := c.Delete(ctx, st); !errors.As(err, &undelivered) {
		t.Fatalf("Delete with an undelivered claim-checked event: %v, want UndeliveredError", err)
	}
	// Turning the claim check off does not remove the event's data either.
	off := spec
	off.ClaimCheck.Enabled = false
	var claims *UndeliveredClaimsError
	if _, err := c.Update(ctx, off, st); !errors.As(err, &claims) || claims.Pending != 1 {
		t.Fatalf("disabling the claim check with an undelivered event: %v, want UndeliveredClaimsError of 1 PENDING", err)
	}
	if _, err := c.S3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(st.ClaimBucket), Key: aws.String(rec.DataRef.Key)}); err != nil {
		t.Fatalf("the event's data is gone: %v", err)
	}
	// Once it is delivered, delete empties the bucket and deletes it.
	if _, err := c.DynamoDB.UpdateItem(ctx, spec.WithDefaults().OutboxTable().MarkPublished(rec, time.Now(), time.Hour)); err != nil {
		t.Fatal(err)
	}
	deleteWithBucket(t, ctx, c, st, "the delivered pipeline")
}

func TestLocalClaimBucketForceDestroyEmptiesIt(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, claimServices...)
	spec := claimSpec("forced", ClaimCheckSpec{})
	spec.ForceDestroy = true
	st := must.Create(t, ctx, c, spec)
	writeClaimed(t, ctx, c, spec)
	writeClaimed(t, ctx, c, spec)
	deleteWithBucket(t, ctx, c, st, "the pipeline under force_destroy")
}

func ignoreOut[T any](_ T, err error) error { return err }

// TestLocalClaimBucketGuardOnAdoptedTable: an adopted table is never
// deleted, so the table's guard lets a destroy through; the bucket's own
// guard stops it, before anything is removed, while an undelivered event's
// data is in the bucket.
func TestLocalClaimBucketGuardOnAdoptedTable(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, claimServices...)
	createAppTable(t, ctx, c, "shop", "")
	spec := claimSpec("shop", ClaimCheckSpec{})
	spec.Table = TableSpec{Existing: true, Name: "shop", PartitionKey: "pk", SortKey: "sk"}
	st := must.Create(t, ctx, c, spec)
	rec := writeClaimed(t, ctx, c, spec)
	var claims *UndeliveredClaimsError
	left, err := c.Delete(ctx, st)
	if !errors.As(err, &claims) || claims.Pending != 1 || claims.Bucket != "shop-claims" {
		t.Fatalf("Delete = %v, want UndeliveredClaimsError of 1 PENDING event in shop-claims", err)
	}
	if left.RelayFunctionName == "" || left.ClaimBucket == "" {
		t.Fatalf("Delete removed components before refusing: %+v", left)
	}
	if _, err := c.getFunction(ctx, st.RelayFunctionName); err != nil {
		t.Fatalf("the relay function is gone after the refusal: %v", err)
	}
	if _, err := c.DynamoDB.UpdateItem(ctx, spec.WithDefaults().OutboxTable().MarkPublished(rec, time.Now(), time.Hour)); err != nil {
		t.Fatal(err)
	}
	deleteWithBucket(t, ctx, c, st, "the delivered pipeline")
}
