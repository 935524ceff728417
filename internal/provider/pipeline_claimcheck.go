package provider

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// ClaimCheckModel is the claim_check object: its settings, and what the
// application's writer, its consumers' roles and the plan need of the
// bucket (computed).
type ClaimCheckModel struct {
	Enabled    types.Bool   `tfsdk:"enabled" spec:"ClaimCheck.Enabled"`
	BucketName types.String `tfsdk:"bucket_name" spec:"ClaimCheck.BucketName"`
	Existing   types.Bool   `tfsdk:"existing" spec:"ClaimCheck.Existing"`
	KMSKeyARN  types.String `tfsdk:"kms_key_arn" spec:"ClaimCheck.KMSKeyARN" drift:"claim_bucket"`

	BucketARN          types.String `tfsdk:"bucket_arn"`
	WriterPolicyJSON   types.String `tfsdk:"writer_policy_json"`
	ConsumerPolicyJSON types.String `tfsdk:"consumer_policy_json"`
	BucketSettings     types.Map    `tfsdk:"bucket_settings"`
}

// claimCheckAttribute is the claim_check object.
func claimCheckAttribute() schema.SingleNestedAttribute {
	computed := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	return optionalObject("The claim-check bucket: the writer (`outbox.WithClaimCheck`) stores there, as `outbox/<eventId>` with its SHA-256, the data of an event too large to publish whole (up to 10 MiB), "+
		"the relay publishes its reference (`metadata.dataRef`), tags the object `outbox-state=published` once the event is published, and the reconciler removes, after each run, the objects whose transaction never committed. "+
		"A dedicated bucket (`<name>-claims`) is created with default encryption (SSE-S3, or SSE-KMS with `kms_key_arn` and an S3 Bucket Key), its public access blocked, a policy refusing requests without TLS, "+
		"lifecycle rules that expire published objects after `published.ttl_days` (at least 1) and abort incomplete uploads after a day, and the pipeline's tags; a change of any of them shows in `bucket_settings` and the next apply restores it. "+
		"Destroy follows the table: the bucket is never removed while an undelivered (`PENDING` or `FAILED`) event's data is in it, unless `force_destroy`; otherwise it is emptied and deleted. "+
		"Unset (null), there is no bucket, and the writer refuses events too large to publish.",
		map[string]schema.Attribute{
			"enabled":     boolSetting("Provision the bucket; `false` removes it (as destroy does) and keeps the settings."),
			"bucket_name": optionalStringAttr("Name of the bucket, {limit}. Required when `existing`; for a dedicated bucket it defaults to `<name>-claims`. Changing it moves the claim check to the new bucket: the old one is removed as on destroy."),
			"existing": boolSetting("Adopt the existing bucket `bucket_name` instead of creating one. Its public access must be blocked; the pipeline tags it `outbox:adopted-by = <name>` and adds its two lifecycle rules (`outbox-expire-published`, `outbox-abort-incomplete-uploads`) beside the bucket's own, " +
				"and leaves its encryption, policy and other tags alone. Destroy removes the rules and the tag, and keeps the objects."),
			"kms_key_arn":          optionalStringAttr("ARN of a KMS key that encrypts a dedicated bucket's objects (SSE-KMS, with an S3 Bucket Key); unset uses SSE-S3. Give it to the writer too (`writer.claim_kms_key_arn`, `outbox.WithClaimKMSKey`)."),
			"bucket_arn":           computed("ARN of the bucket."),
			"writer_policy_json":   computed("IAM policy for the application's role that writes claim-checked events: `s3:PutObject` on `outbox/*` of the bucket and, with `kms_key_arn`, `kms:GenerateDataKey` and `kms:Decrypt` on the key."),
			"consumer_policy_json": computed("IAM policy for a consumer's role that fetches claim-checked data: `s3:GetObject` on `outbox/*` of the bucket and, with `kms_key_arn`, `kms:Decrypt` on the key."),
			"bucket_settings": schema.MapAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The settings the pipeline keeps on the bucket, described (`public_access_block`, `lifecycle`, `tags` and, for a dedicated bucket, `encryption` and `policy`): refresh reads them, so that a change out of band shows here with its values and the next apply restores them."},
		})
}

// claimCheckOutputs sets the computed attributes of claim_check from the
// Spec (with defaults) and the account; unknown when known is false.
func (m *PipelineResourceModel) claimCheckOutputs(s provision.Spec, a provision.Account, known bool) {
	cc := m.ClaimCheck
	if cc == nil {
		return
	}
	writer, consumer := provision.ClaimWriterPolicy(s, a), provision.ClaimConsumerPolicy(s, a)
	switch {
	case !known:
		cc.BucketARN, cc.WriterPolicyJSON, cc.ConsumerPolicyJSON = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
		cc.BucketSettings = types.MapUnknown(types.StringType)
	case writer == nil:
		cc.BucketARN, cc.WriterPolicyJSON, cc.ConsumerPolicyJSON = types.StringNull(), types.StringNull(), types.StringNull()
		cc.BucketSettings = types.MapNull(types.StringType)
	default:
		cc.BucketARN = types.StringValue(a.ClaimBucketARN(s.ClaimCheck.BucketName))
		cc.WriterPolicyJSON, cc.ConsumerPolicyJSON = types.StringValue(writer.JSON()), types.StringValue(consumer.JSON())
		cc.BucketSettings = tagsValue(provision.ClaimBucketSettings(s, a))
	}
}

// claimCheckKnown reports whether the claim check's outputs are known at
// plan: its settings, the pipeline's name, tags and published TTL, and the
// account's partition.
func (in planInputs) claimCheckKnown(plan *PipelineResourceModel) bool {
	cc := plan.ClaimCheck
	if cc == nil {
		return true
	}
	pub := plan.Published == nil || (!plan.Published.Action.IsUnknown() && !plan.Published.TTLDays.IsUnknown())
	return in.nameKnown && pub && in.account.Partition != "" && !plan.TagsAll.IsUnknown() &&
		!cc.Enabled.IsUnknown() && !cc.BucketName.IsUnknown() && !cc.Existing.IsUnknown() && !cc.KMSKeyARN.IsUnknown()
}

// showObservedClaimBucket shows, in a state that Read found the bucket
// changed in, the bucket's settings as they are, so that the plan shows
// each change with its value; of a bucket gone, no ARN and no settings, so
// that the plan shows them coming back.
func (r *PipelineResource) showObservedClaimBucket(ctx context.Context, m *PipelineResourceModel, st provision.State, d provision.Drift) {
	switch {
	case m.ClaimCheck == nil:
	case slices.Contains(d.Missing, provision.ComponentClaimBucket):
		m.ClaimCheck.BucketARN, m.ClaimCheck.BucketSettings = types.StringNull(), types.MapNull(types.StringType)
	case slices.Contains(changedComponents(d), provision.ComponentClaimBucket):
		if observed, err := r.clients().ObservedClaimBucket(ctx, st); err == nil && observed != nil {
			m.ClaimCheck.BucketSettings = tagsValue(observed)
		}
	}
}

// writerClaimValues are the writer object's claim check attributes: the
// bucket and its key, null without a bucket.
func writerClaimValues(s provision.Spec, known bool) map[string]attr.Value {
	if !known {
		return map[string]attr.Value{"claim_bucket": types.StringUnknown(), "claim_kms_key_arn": types.StringUnknown()}
	}
	if !s.ClaimCheck.Enabled {
		return map[string]attr.Value{"claim_bucket": types.StringNull(), "claim_kms_key_arn": types.StringNull()}
	}
	return map[string]attr.Value{"claim_bucket": types.StringValue(s.ClaimCheck.BucketName), "claim_kms_key_arn": optString(s.ClaimCheck.KMSKeyARN)}
}
