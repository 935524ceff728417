package provider

import (
	"fmt"
	"maps"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// writerAttributes are the attributes of the writer object, with their
// descriptions.
var writerAttributes = []struct {
	name, desc string
	typ        attr.Type
}{
	{"table_name", "Name of the outbox table the application writes to.", types.StringType},
	{"partition_key", "Partition key attribute of the table.", types.StringType},
	{"sort_key", "Sort key attribute of the table.", types.StringType},
	{"sort_key_prefix", "Prefix of the sort key of every outbox item.", types.StringType},
	{"pending_index_name", "Name of the sparse pending index. Writers set its keys even when the pipeline has none (`pending_index.enabled = false`), so that turning the index back on finds every pending item.", types.StringType},
	{"pending_index_shards", "Number of shards of the pending index: the writer sets `PENDING#<n>` with n below it.", types.Int64Type},
	{"ttl_attribute", "TTL attribute of the table (what `ttl_attribute_in_use` says).", types.StringType},
	{"claim_bucket", "The claim-check bucket, for `outbox.WithClaimCheck`; null without `claim_check`.", types.StringType},
	{"claim_kms_key_arn", "The KMS key of the claim-checked objects, for `outbox.WithClaimKMSKey`; null for SSE-S3.", types.StringType},
}

const writerDescription = "What an application's writer needs, in one object: " +
	"pass it to the `outbox` package's `Table` (or to any writer of the record contract). Known at plan time when the settings it follows from are."

func writerAttrTypes() map[string]attr.Type {
	out := map[string]attr.Type{}
	for _, a := range writerAttributes {
		out[a.name] = a.typ
	}
	return out
}

// writerMarkdown describes the writer object and each of its attributes.
func writerMarkdown() string {
	var b strings.Builder
	b.WriteString(writerDescription)
	b.WriteString(" Its attributes:")
	for i, a := range writerAttributes {
		sep := ";"
		if i == len(writerAttributes)-1 {
			sep = "."
		}
		fmt.Fprintf(&b, " `%s`: %s%s", a.name, strings.TrimSuffix(a.desc, "."), sep)
	}
	return b.String()
}

// writerResourceAttribute is the computed writer object of outbox_pipeline.
// It is an object attribute rather than a nested one: Terraform 1.5's
// -generate-config-out crashes on computed nested attributes.
func writerResourceAttribute() schema.ObjectAttribute {
	return schema.ObjectAttribute{Computed: true, MarkdownDescription: writerMarkdown(), AttributeTypes: writerAttrTypes()}
}

// writerValue builds the writer object from a Spec with defaults and the
// table's name and TTL attribute, each of which may be unknown.
func writerValue(s provision.Spec, tableName, ttl types.String, known writerKnown) types.Object {
	strOr := func(v string, ok bool) attr.Value {
		if !ok {
			return types.StringUnknown()
		}
		return types.StringValue(v)
	}
	shards := types.Int64Unknown()
	if known.pendingIndex {
		shards = types.Int64Value(int64(s.Table.PendingShards))
	}
	values := map[string]attr.Value{
		"table_name":           tableName,
		"partition_key":        strOr(s.Table.PartitionKey, known.table),
		"sort_key":             strOr(s.Table.SortKey, known.table),
		"sort_key_prefix":      strOr(s.Table.SortKeyPrefix, known.table),
		"pending_index_name":   strOr(s.Table.PendingIndexName, known.pendingIndex),
		"pending_index_shards": shards,
		"ttl_attribute":        ttl,
	}
	maps.Copy(values, writerClaimValues(s, known.claim))
	return types.ObjectValueMust(writerAttrTypes(), values)
}

// writerKnown says which settings of the writer are known.
type writerKnown struct{ table, pendingIndex, claim bool }

func (in planInputs) writer(plan *PipelineResourceModel) types.Object {
	pi := plan.PendingIndex
	return writerValue(in.spec, plan.TableName, plan.TTLAttributeInUse, writerKnown{
		table:        in.tableKnown,
		pendingIndex: pi == nil || (!pi.Name.IsUnknown() && !pi.Shards.IsUnknown()),
		claim:        plan.ClaimCheck == nil || (in.nameKnown && !plan.ClaimCheck.Enabled.IsUnknown() && !plan.ClaimCheck.BucketName.IsUnknown() && !plan.ClaimCheck.KMSKeyARN.IsUnknown()),
	})
}
