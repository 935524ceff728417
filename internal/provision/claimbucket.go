package provision

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The claim-check bucket holds the data of the events too large to publish
// whole (outbox.WithClaimCheck): the writer stores it as
// outbox/<eventId> before its transaction, the relay tags the object of
// every event it published (outbox.ClaimStateTag), the bucket's lifecycle
// rule expires tagged objects with the published items, and the
// reconciler's sweep removes the objects whose transaction never
// committed.
//
// A dedicated bucket (the default, <name>-claims) is created with default
// encryption (SSE-S3, or SSE-KMS with the key and an S3 Bucket Key), its
// public access blocked, a policy that refuses requests without TLS, the
// lifecycle rules and the pipeline's tags; Read reports a change of any of
// them and Update restores it. An adopted bucket (Existing) keeps its own
// encryption, policy and tags: the pipeline checks that its public access
// is blocked, tags it outbox:adopted-by, and adds its two lifecycle rules
// beside the bucket's own; Delete removes exactly those and the tag, and
// keeps the objects.
//
// Delete follows the table: a bucket that holds the data of undelivered
// events (PENDING or FAILED items whose dataRef names it) is never
// deleted, unless force_destroy lets the table, and with it those events,
// go; otherwise it is emptied and deleted.

// ClaimCheckSpec is the claim-check bucket of a pipeline.
type ClaimCheckSpec struct {
	// Enabled provisions the bucket (off by default).
	Enabled bool
	// BucketName is the bucket; required when Existing, otherwise
	// Spec.Name followed by "-claims".
	BucketName string
	// Existing adopts the bucket BucketName instead of creating one.
	Existing bool
	// KMSKeyARN encrypts a dedicated bucket with SSE-KMS and this key;
	// empty uses SSE-S3. The writer is given the key too.
	KMSKeyARN string
}

// ComponentClaimBucket is the claim-check bucket, as named in a Drift.
const ComponentClaimBucket = "claim_bucket"

// suffixClaims ends the name of a dedicated claim-check bucket.
const suffixClaims = "-claims"

// The lifecycle rules of the pipeline, by ID; an adopted bucket keeps its
// other rules.
const (
	ruleExpirePublished = "outbox-expire-published"
	ruleAbortMultipart  = "outbox-abort-incomplete-uploads"
)

// bucketNamePattern is S3's rule for a general purpose bucket's name
// (without the dots that break virtual-hosted TLS).
var bucketNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)

// bucketNamed is the limit of a bucket's name.
var bucketNamed = validation.Rule{Text: "a bucket name: 3 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit", Func: checkBucketName}

func checkBucketName(name string) (problem, fix string) {
	if bucketNamePattern.MatchString(name) && !strings.Contains(name, "--") {
		return "", ""
	}
	return fmt.Sprintf("%q is not a valid bucket name", name),
		"use 3 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit (set claim_check.bucket_name when the pipeline's name does not make one)"
}

func (c ClaimCheckSpec) withDefaults(name string) ClaimCheckSpec {
	if c.BucketName == "" && c.Enabled && !c.Existing && name != "" {
		c.BucketName = name + suffixClaims
	}
	return c
}

func (s Spec) validateClaimCheck() error {
	cc := s.ClaimCheck
	switch {
	case !cc.Enabled:
		return nil
	case cc.Existing && cc.BucketName == "":
		return invalid("ClaimCheck.BucketName", "name the bucket to adopt", "is required with claim_check.existing")
	case cc.KMSKeyARN != "" && !strings.HasPrefix(cc.KMSKeyARN, "arn:"):
		return invalid("ClaimCheck.KMSKeyARN", "use the key's ARN (arn:aws:kms:<region>:<account>:key/<id>)", "%q is not an ARN", cc.KMSKeyARN)
	case s.PublishedAction == config.ActionMark && s.PublishedTTL != nil && *s.PublishedTTL == 0:
		return invalidAgainst("PublishedTTL", []string{"ClaimCheck.Enabled"}, "keep published items for 1 day or more, or use published.action = \"delete\"",
			"is 0 (forever), but the claim-check bucket expires published objects after published.ttl_days")
	}
	return nil
}

// ClaimBucketARN is the ARN of a bucket.
func (a Account) ClaimBucketARN(bucket string) string {
	return ARN{Partition: cmp.Or(a.Partition, "aws"), Service: "s3", Resource: bucket}.String()
}

// claimExpiryDays is how long a published object is kept: the published
// items' TTL (published.ttl_days, which in delete mode sets only this), at
// least one day.
func (s Spec) claimExpiryDays() int32 {
	ttl := cmp.Or(s.PublishedTTL, ptr(config.DefaultPublishedTTL))
	return max(int32(*ttl/(24*time.Hour)), 1)
}

// claimSweepWindow is the window of the reconciler's sweep: twice its
// period, and at least claimsweep's default of two hours; two days for a
// cron schedule, whose period is not fixed.
func (s Spec) claimSweepWindow() time.Duration {
	if !strings.HasPrefix(s.Reconciler.ScheduleExpression, "rate(") {
		return 48 * time.Hour
	}
	return max(2*time.Duration(reconcilerPeriod(s.Reconciler.ScheduleExpression))*time.Second, 2*time.Hour)
}

// claimEnvironment is the relay's environment of the claim check.
func (s Spec) claimEnvironment() map[string]string {
	if !s.ClaimCheck.Enabled {
		return nil
	}
	return map[string]string{config.EnvClaimBucket: s.ClaimCheck.BucketName, config.EnvClaimSweepWindow: s.claimSweepWindow().String()}
}

// claimLifecycleRules are the pipeline's lifecycle rules.
func (s Spec) claimLifecycleRules() []s3types.LifecycleRule {
	return []s3types.LifecycleRule{
		{ID: aws.String(ruleExpirePublished), Status: s3types.ExpirationStatusEnabled,
			Filter: &s3types.LifecycleRuleFilter{And: &s3types.LifecycleRuleAndOperator{Prefix: aws.String(outbox.ClaimObjectPrefix),
				Tags: []s3types.Tag{{Key: aws.String(outbox.ClaimStateTag), Value: aws.String(outbox.ClaimStatePublished)}}}},
			Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(s.claimExpiryDays())}},
		{ID: aws.String(ruleAbortMultipart), Status: s3types.ExpirationStatusEnabled,
			Filter:                         &s3types.LifecycleRuleFilter{Prefix: aws.String(outbox.ClaimObjectPrefix)},
			AbortIncompleteMultipartUpload: &s3types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)}},
	}
}

// claimBucketPolicy is a dedicated bucket's policy: no request without TLS.
func claimBucketPolicy(bucketARN string) PolicyDocument {
	return PolicyDocument{Version: policyVersion, Statement: []Statement{{
		Sid: "DenyInsecureTransport", Effect: "Deny", Principal: map[string]string{"AWS": "*"}, Action: []string{"s3:*"},
		Resource: []string{bucketARN, bucketARN + "/*"}, Condition: map[string]map[string]string{"Bool": {"aws:SecureTransport": "false"}},
	}}}
}

var blockAllPublicAccess = s3types.PublicAccessBlockConfiguration{
	BlockPublicAcls: aws.Bool(true), IgnorePublicAcls: aws.Bool(true), BlockPublicPolicy: aws.Bool(true), RestrictPublicBuckets: aws.Bool(true),
}

var claimBucketComponent = componentDef{
	Name: ComponentClaimBucket, Recorded: func(st State) bool { return st.ClaimBucket != "" },
	Wanted: func(p *pass) bool { return p.s.ClaimCheck.Enabled },
	Ensure: func(c *Provisioner, ctx context.Context, p *pass) error {
		if err := c.ensureClaimBucket(ctx, p.s, p.st); err != nil {
			return fmt.Errorf("claim-check bucket (%s): %w", p.s.ClaimCheck.BucketName, err)
		}
		return nil
	},
	Read: (*Provisioner).readClaimBucket, Remove: (*Provisioner).removeClaimBucket, Lookup: (*Provisioner).lookupClaimBucket,
}

func (c *Provisioner) ensureClaimBucket(ctx context.Context, s Spec, st *State) error {
	cc := s.ClaimCheck
	if st.ClaimBucket != "" && st.ClaimBucket != cc.BucketName {
		// Another bucket was asked for: the recorded one goes as on delete.
		if err := c.removeClaimBucket(ctx, st); err != nil {
			return err
		}
	}
	tags, err := c.bucketTags(ctx, cc.BucketName)
	switch {
	case errors.Is(err, awsops.ErrNotFound) && cc.Existing:
		return errors.New("it does not exist: create it, or set claim_check.existing = false for a dedicated bucket")
	case errors.Is(err, awsops.ErrNotFound):
		if err := c.createBucket(ctx, cc.BucketName); err != nil {
			return err
		}
	case err != nil:
		return fmt.Errorf("reading its tags: %w", err)
	default:
		ours := st.ClaimBucket == cc.BucketName && st.ClaimBucketOwned == !cc.Existing
		if err := claimableBucket(s, tags, ours); err != nil {
			return err
		}
	}
	st.ClaimBucket, st.ClaimBucketOwned = cc.BucketName, !cc.Existing
	st.ClaimBucketARN = st.account().ClaimBucketARN(cc.BucketName)
	if cc.Existing {
		return c.adoptBucket(ctx, s, tags)
	}
	return c.configureBucket(ctx, s, st.ClaimBucketARN)
}

// claimableBucket checks that an existing bucket may be the pipeline's: a
// dedicated one that it created (recorded, or tagged with its name), or
// one to adopt that no other pipeline uses.
func claimableBucket(s Spec, tags map[string]string, recorded bool) error {
	for _, k := range []string{TagAdoptedBy, TagPipeline} {
		if other := tags[k]; other != "" && other != s.Name {
			return fmt.Errorf("it belongs to the outbox pipeline %s (tag %s): give this pipeline its own bucket", other, k)
		}
	}
	if !s.ClaimCheck.Existing && !recorded && tags[TagPipeline] != s.Name {
		return errors.New("a bucket of that name already exists: set claim_check.existing = true to adopt it, or choose another claim_check.bucket_name")
	}
	return nil
}

func (c *Provisioner) createBucket(ctx context.Context, bucket string) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(bucket)}
	if c.Region != "" && c.Region != "us-east-1" {
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(c.Region)}
	}
	if _, err := c.S3.CreateBucket(ctx, in); err != nil {
		return fmt.Errorf("creating it: %w", err)
	}
	return nil
}

// configureBucket brings every setting of a dedicated bucket to the Spec's.
func (c *Provisioner) configureBucket(ctx context.Context, s Spec, arn string) error {
	b := aws.String(s.ClaimCheck.BucketName)
	steps := []struct {
		what string
		call func() error
	}{
		{"blocking public access", func() error {
			_, err := c.S3.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: b, PublicAccessBlockConfiguration: &blockAllPublicAccess})
			return err
		}},
		{"setting its default encryption", func() error {
			_, err := c.S3.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: b, ServerSideEncryptionConfiguration: &s3types.ServerSideEncryptionConfiguration{
				Rules: []s3types.ServerSideEncryptionRule{claimEncryptionRule(s.ClaimCheck.KMSKeyARN)}}})
			return err
		}},
		{"setting its TLS-only policy", func() error {
			_, err := c.S3.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(claimBucketPolicy(arn).JSON())})
			return err
		}},
		{"setting its lifecycle rules", func() error {
			_, err := c.S3.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: b,
				LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: s.claimLifecycleRules()}})
			return err
		}},
		{"tagging it", func() error {
			_, err := c.S3.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: b, Tagging: &s3types.Tagging{TagSet: s3Tags(s.tags())}})
			return err
		}},
	}
	for _, step := range steps {
		if err := step.call(); err != nil {
			return fmt.Errorf("%s: %w", step.what, err)
		}
	}
	return nil
}

func claimEncryptionRule(kmsKeyARN string) s3types.ServerSideEncryptionRule {
	if kmsKeyARN == "" {
		return s3types.ServerSideEncryptionRule{ApplyServerSideEncryptionByDefault: &s3types.ServerSideEncryptionByDefault{SSEAlgorithm: s3types.ServerSideEncryptionAes256}}
	}
	return s3types.ServerSideEncryptionRule{BucketKeyEnabled: aws.Bool(true), ApplyServerSideEncryptionByDefault: &s3types.ServerSideEncryptionByDefault{
		SSEAlgorithm: s3types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String(kmsKeyARN)}}
}

// adoptBucket checks that an adopted bucket blocks public access, tags it
// and adds the pipeline's lifecycle rules to its own.
func (c *Provisioner) adoptBucket(ctx context.Context, s Spec, tags map[string]string) error {
	b := s.ClaimCheck.BucketName
	pab, err := c.publicAccessBlock(ctx, b)
	if err != nil {
		return fmt.Errorf("reading its public access block: %w", err)
	}
	if !allBlocked(pab) {
		return errors.New("its public access is not blocked: turn all four settings of its public access block on (aws_s3_bucket_public_access_block), since it will hold the events' data")
	}
	if tags[TagAdoptedBy] != s.Name {
		if _, err := c.S3.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(b),
			Tagging: &s3types.Tagging{TagSet: s3Tags(awsops.WithTag(tags, TagAdoptedBy, s.Name))}}); err != nil {
			return fmt.Errorf("tagging it %s=%s: %w", TagAdoptedBy, s.Name, err)
		}
	}
	rules, err := c.lifecycleRules(ctx, b)
	if err != nil {
		return fmt.Errorf("reading its lifecycle rules: %w", err)
	}
	merged := append(withoutOutboxRules(rules), s.claimLifecycleRules()...)
	if _, err := c.S3.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(b),
		LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: merged}}); err != nil {
		return fmt.Errorf("adding its lifecycle rules: %w", err)
	}
	return nil
}

func withoutOutboxRules(rules []s3types.LifecycleRule) []s3types.LifecycleRule {
	return slices.DeleteFunc(slices.Clone(rules), isOutboxRule)
}

func allBlocked(c *s3types.PublicAccessBlockConfiguration) bool {
	return c != nil && aws.ToBool(c.BlockPublicAcls) && aws.ToBool(c.IgnorePublicAcls) && aws.ToBool(c.BlockPublicPolicy) && aws.ToBool(c.RestrictPublicBuckets)
}

func s3Tags(tags map[string]string) []s3types.Tag {
	return awsops.TagList(tags, func(k, v *string) s3types.Tag { return s3types.Tag{Key: k, Value: v} })
}

// bucketTags are a bucket's tags; a NotFoundError when it does not exist.
func (c *Provisioner) bucketTags(ctx context.Context, bucket string) (map[string]string, error) {
	if _, err := c.S3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
		if awsops.IsNotFound(err) {
			return nil, &awsops.NotFoundError{Kind: "bucket", ID: bucket, Err: err}
		}
		return nil, err
	}
	out, err := c.S3.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)})
	if awsops.IsNotFound(err) {
		return map[string]string{}, nil // no tag set
	}
	if err != nil {
		return nil, err
	}
	return awsops.TagMap(out.TagSet, func(t s3types.Tag) (*string, *string) { return t.Key, t.Value }), nil
}

// The configurations of a bucket; nil (none) when the bucket has none.

func (c *Provisioner) publicAccessBlock(ctx context.Context, bucket string) (*s3types.PublicAccessBlockConfiguration, error) {
	out, err := c.S3.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(bucket)})
	return awsops.Found(out, err, func(o *s3.GetPublicAccessBlockOutput) *s3types.PublicAccessBlockConfiguration {
		return o.PublicAccessBlockConfiguration
	})
}

func (c *Provisioner) lifecycleRules(ctx context.Context, bucket string) ([]s3types.LifecycleRule, error) {
	out, err := c.S3.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
	return awsops.Found(out, err, func(o *s3.GetBucketLifecycleConfigurationOutput) []s3types.LifecycleRule { return o.Rules })
}

func (c *Provisioner) encryptionRule(ctx context.Context, bucket string) (*s3types.ServerSideEncryptionRule, error) {
	out, err := c.S3.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String(bucket)})
	return awsops.Found(out, err, func(o *s3.GetBucketEncryptionOutput) *s3types.ServerSideEncryptionRule {
		if o.ServerSideEncryptionConfiguration == nil || len(o.ServerSideEncryptionConfiguration.Rules) == 0 {
			return nil
		}
		return &o.ServerSideEncryptionConfiguration.Rules[0]
	})
}

func (c *Provisioner) bucketPolicy(ctx context.Context, bucket string) (string, error) {
	out, err := c.S3.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(bucket)})
	return awsops.Found(out, err, func(o *s3.GetBucketPolicyOutput) string { return aws.ToString(o.Policy) })
}

// readClaimBucket compares the recorded bucket with the Spec: each setting
// the pipeline keeps (claimBucketDiff) that differs is a changed field.
func (c *Provisioner) readClaimBucket(ctx context.Context, p *pass) error {
	st := p.st
	return readRecorded(p, ComponentClaimBucket, "claim-check bucket", st.ClaimBucket,
		func() (bucketSettings, error) { return c.bucketSettings(ctx, st.ClaimBucket) },
		func() { st.ClaimBucket, st.ClaimBucketARN, st.ClaimBucketOwned = "", "", false },
		func(have bucketSettings) []string { return claimBucketDiff(p.s, *st, have) })
}

// bucketSettings are what Read compares of a bucket.
type bucketSettings struct {
	tags       map[string]string
	publicAcc  *s3types.PublicAccessBlockConfiguration
	encryption *s3types.ServerSideEncryptionRule
	policy     string
	rules      []s3types.LifecycleRule
}

func (c *Provisioner) bucketSettings(ctx context.Context, bucket string) (bucketSettings, error) {
	var b bucketSettings
	var err error
	if b.tags, err = c.bucketTags(ctx, bucket); err != nil {
		return b, err
	}
	var errs [4]error
	b.publicAcc, errs[0] = c.publicAccessBlock(ctx, bucket)
	b.encryption, errs[1] = c.encryptionRule(ctx, bucket)
	b.policy, errs[2] = c.bucketPolicy(ctx, bucket)
	b.rules, errs[3] = c.lifecycleRules(ctx, bucket)
	return b, errors.Join(errs[:]...)
}

// claimBucketDiff names the settings of the bucket that differ from the
// Spec's (see ClaimBucketSettings).
func claimBucketDiff(s Spec, st State, have bucketSettings) []string {
	want, got := ClaimBucketSettings(s, st.account()), describeBucket(st.ClaimBucketOwned, have)
	var fields []string
	for _, k := range awsops.SortedKeys(want) {
		fields = append(fields, changedIf(got[k] != want[k], k)...)
	}
	return fields
}

// Settings of the bucket that the pipeline keeps, as ClaimBucketSettings
// names them.
const (
	BucketPublicAccessBlock = "public_access_block"
	BucketEncryption        = "encryption"
	BucketPolicy            = "policy"
	BucketLifecycle         = "lifecycle"
	BucketTags              = "tags"
)

// ClaimBucketSettings describes the settings that the pipeline keeps on
// its claim-check bucket, as the pipeline sets them; ObservedClaimBucket
// describes them as they are, so that a change out of band shows with its
// values. An adopted bucket has only its public access block, the
// pipeline's lifecycle rules and its adoption tag. Nil without a bucket.
func ClaimBucketSettings(s Spec, a Account) map[string]string {
	s = s.WithDefaults()
	if !s.ClaimCheck.Enabled {
		return nil
	}
	enc := claimEncryptionRule(s.ClaimCheck.KMSKeyARN)
	want := bucketSettings{publicAcc: &blockAllPublicAccess, encryption: &enc, rules: s.claimLifecycleRules(),
		policy: claimBucketPolicy(a.ClaimBucketARN(s.ClaimCheck.BucketName)).JSON(), tags: s.tags()}
	if s.ClaimCheck.Existing {
		want.tags = map[string]string{TagAdoptedBy: s.Name}
	}
	return describeBucket(!s.ClaimCheck.Existing, want)
}

// ObservedClaimBucket describes the recorded bucket's settings as they
// are (see ClaimBucketSettings).
func (c *Provisioner) ObservedClaimBucket(ctx context.Context, st State) (map[string]string, error) {
	if st.ClaimBucket == "" {
		return nil, nil
	}
	have, err := c.bucketSettings(ctx, st.ClaimBucket)
	if err != nil {
		return nil, fmt.Errorf("reading claim-check bucket (%s): %w", st.ClaimBucket, err)
	}
	return describeBucket(st.ClaimBucketOwned, have), nil
}

// describeBucket describes the settings of a bucket that the pipeline
// keeps: of an adopted one, only those it adds.
func describeBucket(owned bool, b bucketSettings) map[string]string {
	out := map[string]string{
		BucketPublicAccessBlock: describePublicAccess(b.publicAcc),
		BucketLifecycle:         describeRules(outboxRules(b.rules)),
	}
	if !owned {
		out[BucketTags] = describeTags(map[string]string{TagAdoptedBy: b.tags[TagAdoptedBy]})
		return out
	}
	out[BucketEncryption] = describeEncryption(b.encryption)
	out[BucketPolicy] = "none"
	if b.policy != "" {
		out[BucketPolicy] = compactPolicy(b.policy)
	}
	out[BucketTags] = describeTags(b.tags)
	return out
}

func describePublicAccess(c *s3types.PublicAccessBlockConfiguration) string {
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("BlockPublicAcls=%t, BlockPublicPolicy=%t, IgnorePublicAcls=%t, RestrictPublicBuckets=%t",
		aws.ToBool(c.BlockPublicAcls), aws.ToBool(c.BlockPublicPolicy), aws.ToBool(c.IgnorePublicAcls), aws.ToBool(c.RestrictPublicBuckets))
}

func describeEncryption(r *s3types.ServerSideEncryptionRule) string {
	if r == nil || r.ApplyServerSideEncryptionByDefault == nil {
		return "none"
	}
	d := r.ApplyServerSideEncryptionByDefault
	out := string(d.SSEAlgorithm)
	if k := aws.ToString(d.KMSMasterKeyID); k != "" {
		out += " with " + k
	}
	if aws.ToBool(r.BucketKeyEnabled) {
		out += ", S3 Bucket Key"
	}
	return out
}

// describeRules describes lifecycle rules by what they do, sorted.
func describeRules(rules []s3types.LifecycleRule) string {
	if len(rules) == 0 {
		return "none"
	}
	var out []string
	for _, r := range rules {
		var b strings.Builder
		fmt.Fprintf(&b, "%s (%s", aws.ToString(r.ID), r.Status)
		if f := r.Filter; f != nil && f.And != nil {
			fmt.Fprintf(&b, ", prefix %s", aws.ToString(f.And.Prefix))
			for _, t := range f.And.Tags {
				fmt.Fprintf(&b, ", tag %s=%s", aws.ToString(t.Key), aws.ToString(t.Value))
			}
		} else if f != nil && f.Prefix != nil {
			fmt.Fprintf(&b, ", prefix %s", aws.ToString(f.Prefix))
		}
		if r.Expiration != nil {
			fmt.Fprintf(&b, ", expire after %d days", aws.ToInt32(r.Expiration.Days))
		}
		if r.AbortIncompleteMultipartUpload != nil {
			fmt.Fprintf(&b, ", abort incomplete uploads after %d days", aws.ToInt32(r.AbortIncompleteMultipartUpload.DaysAfterInitiation))
		}
		b.WriteString(")")
		out = append(out, b.String())
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// describeTags lists the tags, but those AWS manages (aws:...), as
// key=value sorted by key.
func describeTags(tags map[string]string) string {
	var out []string
	for _, k := range awsops.SortedKeys(tags) {
		if !strings.HasPrefix(strings.ToLower(k), "aws:") && tags[k] != "" {
			out = append(out, k+"="+tags[k])
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// compactPolicy is a policy document in compact JSON, its one-element
// lists unwrapped and keys sorted, so that equal policies read the same.
func compactPolicy(doc string) string {
	var v any
	if json.Unmarshal([]byte(doc), &v) != nil {
		return doc
	}
	b, err := json.Marshal(awsops.NormalisedPolicy(v))
	if err != nil {
		return doc
	}
	return string(b)
}

// removeClaimBucket deletes a dedicated bucket, emptied first, or releases
// an adopted one (its objects are kept). Neither happens while an
// undelivered event's data is in the bucket, unless force_destroy.
func (c *Provisioner) removeClaimBucket(ctx context.Context, st *State) error {
	if st.ClaimBucket == "" {
		return nil
	}
	if err := c.checkUndeliveredClaims(ctx, *st); err != nil {
		return err
	}
	var err error
	if st.ClaimBucketOwned {
		err = c.deleteBucket(ctx, st.ClaimBucket)
	} else {
		err = c.releaseBucket(ctx, st.ClaimBucket, st.Name)
	}
	if err != nil {
		return fmt.Errorf("removing claim-check bucket (%s): %w", st.ClaimBucket, err)
	}
	st.ClaimBucket, st.ClaimBucketARN, st.ClaimBucketOwned = "", "", false
	return nil
}

// UndeliveredClaimsError is returned when a claim-check bucket holds the
// data of undelivered events: removing it would make them undeliverable.
type UndeliveredClaimsError struct {
	Pipeline, Bucket, Table string
	Undelivered
}

func (e *UndeliveredClaimsError) Error() string {
	return fmt.Sprintf("removing the claim-check bucket %s of outbox pipeline (%s): the table %s holds %s events whose data is in it, which removing the bucket would lose. "+
		"Deliver them first (`outbox drain %s`, `outbox requeue %s`), or, to lose them, set force_destroy = true and apply it first",
		e.Bucket, e.Pipeline, e.Table, e.Undelivered, e.Pipeline, e.Pipeline)
}

// checkUndeliveredClaims refuses while the table holds PENDING or FAILED
// items whose dataRef names the bucket, unless st.ForceDestroy.
func (c *Provisioner) checkUndeliveredClaims(ctx context.Context, st State) error {
	if st.ClaimBucket == "" || st.TableName == "" || st.ForceDestroy {
		return nil
	}
	u, err := c.countClaimed(ctx, st.TableName, st.ClaimBucket)
	if err != nil {
		return fmt.Errorf("removing the claim-check bucket %s: %w", st.ClaimBucket, err)
	}
	if u.Total() > 0 {
		return &UndeliveredClaimsError{Pipeline: st.Name, Bucket: st.ClaimBucket, Table: st.TableName, Undelivered: u}
	}
	return nil
}

// deleteBucket empties a bucket, then deletes it.
func (c *Provisioner) deleteBucket(ctx context.Context, bucket string) error {
	pages := s3.NewListObjectsV2Paginator(c.S3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if awsops.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing its objects: %w", err)
		}
		var ids []s3types.ObjectIdentifier
		for _, o := range page.Contents {
			ids = append(ids, s3types.ObjectIdentifier{Key: o.Key})
		}
		if len(ids) == 0 {
			continue
		}
		out, err := c.S3.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
		if err == nil && len(out.Errors) > 0 {
			err = fmt.Errorf("%s: %s", aws.ToString(out.Errors[0].Key), aws.ToString(out.Errors[0].Message))
		}
		if err != nil {
			return fmt.Errorf("emptying it: %w", err)
		}
	}
	_, err := c.S3.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	return awsops.IgnoreNotFound(err)
}

// releaseBucket removes from an adopted bucket the pipeline's lifecycle
// rules and its adoption tag.
func (c *Provisioner) releaseBucket(ctx context.Context, bucket, pipeline string) error {
	tags, err := c.bucketTags(ctx, bucket)
	if errors.Is(err, awsops.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading its tags: %w", err)
	}
	rules, err := c.lifecycleRules(ctx, bucket)
	if err != nil {
		return fmt.Errorf("reading its lifecycle rules: %w", err)
	}
	if kept := withoutOutboxRules(rules); len(kept) == 0 && len(rules) > 0 {
		_, err = c.S3.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String(bucket)})
	} else if len(kept) < len(rules) {
		_, err = c.S3.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(bucket),
			LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: kept}})
	}
	if err != nil {
		return fmt.Errorf("removing its lifecycle rules: %w", err)
	}
	if tags[TagAdoptedBy] != pipeline {
		return nil
	}
	delete(tags, TagAdoptedBy)
	if len(tags) == 0 {
		_, err = c.S3.DeleteBucketTagging(ctx, &s3.DeleteBucketTaggingInput{Bucket: aws.String(bucket)})
	} else {
		_, err = c.S3.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(bucket), Tagging: &s3types.Tagging{TagSet: s3Tags(tags)}})
	}
	if err != nil {
		return fmt.Errorf("removing its tag %s: %w", TagAdoptedBy, err)
	}
	return nil
}

// lookupClaimBucket finds the bucket that the relay's environment names:
// adopted when it carries the pipeline's adoption tag.
func (c *Provisioner) lookupClaimBucket(ctx context.Context, p *pass) error {
	bucket := p.rc.ClaimBucket
	if bucket == "" {
		return nil
	}
	b, err := c.bucketSettings(ctx, bucket)
	if errors.Is(err, awsops.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading claim-check bucket (%s): %w", bucket, err)
	}
	adopted := b.tags[TagAdoptedBy] == p.s.Name
	p.s.ClaimCheck = ClaimCheckSpec{Enabled: true, BucketName: bucket, Existing: adopted}
	if e := b.encryption; !adopted && e != nil && e.ApplyServerSideEncryptionByDefault != nil {
		p.s.ClaimCheck.KMSKeyARN = aws.ToString(e.ApplyServerSideEncryptionByDefault.KMSMasterKeyID)
	}
	p.st.ClaimBucket, p.st.ClaimBucketOwned = bucket, !adopted
	p.st.ClaimBucketARN = p.st.account().ClaimBucketARN(bucket)
	return nil
}

// countClaimed counts the PENDING and FAILED items of a table whose data
// is in bucket.
func (c *Provisioner) countClaimed(ctx context.Context, table, bucket string) (Undelivered, error) {
	return c.countUndeliveredWhere(ctx, table, "#ref.#bucket = :bucket",
		map[string]string{"#ref": outbox.AttrDataRef, "#bucket": "bucket"},
		map[string]ddbtypes.AttributeValue{":bucket": &ddbtypes.AttributeValueMemberS{Value: bucket}},
		"table "+table+" with data in "+bucket)
}

// claimBucketARN is the ARN of the Spec's claim-check bucket; empty
// without one.
func (s Spec) claimBucketARN(a Account) string {
	cc := s.WithDefaults().ClaimCheck
	if !cc.Enabled || cc.BucketName == "" {
		return ""
	}
	return a.ClaimBucketARN(cc.BucketName)
}

// claimObjects is the resource of the claim-checked objects.
func claimObjects(bucketARN string) string { return bucketARN + "/" + outbox.ClaimObjectPrefix + "*" }

// claimKMS is the statement of the key that encrypts the objects, if any.
func claimKMS(r Resources, actions ...string) []Statement {
	if r.ClaimKMSKeyARN == "" {
		return nil
	}
	return []Statement{allow("UseClaimKey", actions, r.ClaimKMSKeyARN)}
}

// relayClaimStatements let the relay read the object of a claim-checked
// event, to publish its data inline when it fits the target's message,
// with the key's Decrypt under SSE-KMS, and tag the object of every
// claim-checked event it publishes (targetkind's claimPublisher).
func relayClaimStatements(r Resources) []Statement {
	if r.ClaimBucketARN == "" {
		return nil
	}
	return append([]Statement{
		allow("ReadClaims", []string{"s3:GetObject"}, claimObjects(r.ClaimBucketARN)),
		allow("TagPublishedClaims", []string{"s3:PutObjectTagging"}, claimObjects(r.ClaimBucketARN)),
	}, claimKMS(r, "kms:Decrypt")...)
}

// reconcilerClaimStatements let the reconciler read and tag the objects
// of the claim-checked events it republishes, as the relay does (without
// the tag such an event is republished on every run and never marked),
// and let its sweep (package claimsweep) list the claim-checked objects,
// read their metadata (HeadObject is authorised by s3:GetObject, which
// the relay's statements grant) and tags, read their items and remove the
// uncommitted ones.
func reconcilerClaimStatements(r Resources) []Statement {
	if r.ClaimBucketARN == "" {
		return nil
	}
	list := allow("ListClaims", []string{"s3:ListBucket"}, r.ClaimBucketARN)
	list.Condition = map[string]map[string]string{"StringLike": {"s3:prefix": outbox.ClaimObjectPrefix + "*"}}
	return append(relayClaimStatements(r),
		list,
		allow("SweepClaims", []string{"s3:DeleteObject", "s3:GetObjectTagging"}, claimObjects(r.ClaimBucketARN)),
		allow("ReadClaimItems", []string{"dynamodb:GetItem"}, r.TableARN),
	)
}

// ClaimWriterPolicy is the policy an application's writer needs to store
// claim-checked data (outbox.WithClaimCheck): PutObject under outbox/,
// and the key's GenerateDataKey with SSE-KMS. Nil without a bucket.
func ClaimWriterPolicy(s Spec, a Account) *PolicyDocument {
	return claimPolicy(s, a, "PutClaims", "s3:PutObject", "kms:GenerateDataKey", "kms:Decrypt")
}

// ClaimConsumerPolicy is the policy a consumer needs to fetch
// claim-checked data: GetObject under outbox/, and the key's Decrypt with
// SSE-KMS. Nil without a bucket.
func ClaimConsumerPolicy(s Spec, a Account) *PolicyDocument {
	return claimPolicy(s, a, "GetClaims", "s3:GetObject", "kms:Decrypt")
}

// claimPolicy allows action on the claim-checked objects, under sid, and
// the kms actions on the bucket's key with SSE-KMS. Nil without a bucket.
func claimPolicy(s Spec, a Account, sid, action string, kms ...string) *PolicyDocument {
	r := s.resources(a, "", "")
	if r.ClaimBucketARN == "" {
		return nil
	}
	return &PolicyDocument{Version: policyVersion, Statement: append([]Statement{
		allow(sid, []string{action}, claimObjects(r.ClaimBucketARN)),
	}, claimKMS(r, kms...)...)}
}

// outboxRules are the pipeline's rules among a bucket's.
func outboxRules(rules []s3types.LifecycleRule) []s3types.LifecycleRule {
	return slices.DeleteFunc(slices.Clone(rules), func(r s3types.LifecycleRule) bool { return !isOutboxRule(r) })
}

func isOutboxRule(r s3types.LifecycleRule) bool {
	id := aws.ToString(r.ID)
	return id == ruleExpirePublished || id == ruleAbortMultipart
}
