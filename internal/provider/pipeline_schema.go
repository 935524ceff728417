package provider

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// The settings of outbox_pipeline are single nested attributes, one
// function per object. An object with defaults is Optional and Computed,
// and its default is the object of its attributes' defaults, so that an
// omitted object plans every default (outbox_pipeline.p.table.sort_key_prefix
// is known at plan). An object whose absence means "off" (alarms,
// relay.vpc_config) is null when omitted.

// optionalStringAttr is an optional string without a default: unset, it
// is null.
func optionalStringAttr(desc string, v ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, MarkdownDescription: desc, Validators: v}
}

// withDefault appends the default to a description that does not state it.
func withDefault(desc, def string) string {
	if strings.Contains(desc, "Defaults to") {
		return desc
	}
	return desc + " Defaults to `" + def + "`."
}

const awsTableLifecycle = "If the table is also managed with `hashicorp/aws`'s `aws_dynamodb_table`, keep the two from undoing each other's changes with " +
	"`lifecycle { ignore_changes = [stream_enabled, stream_view_type, global_secondary_index, attribute, ttl, tags[\"outbox:adopted-by\"], tags_all[\"outbox:adopted-by\"]] }` on the table. " +
	"An adopted table is tagged `outbox:adopted-by = <name>`: a second pipeline refuses to adopt it (or another pipeline's dedicated table), so that destroying one never removes what the other uses."

// schema is the resource's schema, as Schema returns it.
func (r *PipelineResource) schema(ctx context.Context) schema.Schema {
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	return sr.Schema
}

// Schema describes the resource.
func (r *PipelineResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Version: pipelineSchemaVersion,
		MarkdownDescription: "A complete transactional outbox on a DynamoDB table: the table's stream and sparse pending index, " +
			"a relay Lambda function invoked by a filtered event source mapping that publishes every outbox item to EventBridge or SNS, " +
			"its dead-letter queue, and a scheduled reconciler that republishes what the stream missed. " +
			"Applications write events with the `outbox` Go package (or any writer following its record contract) in the same `TransactWriteItems` as their data.\n\n" +
			"Every component is named after `name`. The relay code is embedded in the provider: a new provider release with new relay code plans an in-place update of the functions (`relay_package_sha256`).",
		Attributes: map[string]schema.Attribute{
			"name": nameAttr("pipeline", ", the prefix of every component it creates (`<name>-outbox` table, `<name>-relay` function, `<name>-relay-dlq` queue, `<name>-reconciler`...)",
				provision.MaxNameLength),
			"tags": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Tags of every component that takes tags (not of an adopted table). Merged with the provider's `default_tags`; these win on conflicts.",
			},
			"force_destroy": boolSetting("Let destroy (or a replacement) delete a dedicated table that still holds `PENDING` or `FAILED` events, which are then lost, as `aws_s3_bucket`'s `force_destroy`. " +
				"Without it, destroy fails with the counts: deliver the events first (`outbox drain <name>`, `outbox requeue <name>`). Apply it before the destroy: destroy reads the value in the state."),
			"tags_all": schema.MapAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The tags applied: the provider's `default_tags` merged with `tags`.",
			},
			"writer": writerResourceAttribute(),
			"alarm_arns": schema.MapAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "ARNs of the CloudWatch alarms by key: `dlq_not_empty`, `relay_errors`, `iterator_age`, `events_failed`, `environment_errors`, with the reconciler `oldest_pending_age`, `stuck`, `reconciler_events_failed` and `reconciler_environment_errors`, and with `multi_region` `ordering_conflicts` (in ordered mode) and `takeover_unavailable` (with the reconciler). " +
					"Null without `alarms`.",
			},
			"table":         tableAttribute(),
			"target":        targetAttribute(),
			"relay":         relayAttribute(),
			"published":     publishedAttribute(),
			"ordering":      orderingAttribute(),
			"pending_index": pendingIndexAttribute(),
			"reconciler":    reconcilerAttribute(),
			"dead_letter":   deadLetterAttribute(),
			"alarms":        alarmsAttribute(),
			"claim_check":   claimCheckAttribute(),
			"multi_region":  multiRegionAttribute(),
			"iam":           iamAttribute(),
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
	maps.Copy(resp.Schema.Attributes, computedStringAttributes())
	declareSettings(resp.Schema.Attributes, pipelineSettings)
}

// pipelineSettings declares the settings of outbox_pipeline: their
// defaults are those of provision.Spec, where an object of alarms enables
// them; their limits, provision's.
var pipelineSettings = settingsDeclaration{
	model:    reflect.TypeFor[PipelineResourceModel](),
	defaults: pipelineDefaults(),
	limit:    provision.Limit,
	summary:  pipelineInvalid,
}

// pipelineInvalid is the summary of an invalid pipeline setting.
const pipelineInvalid = "Invalid outbox pipeline configuration"

// pipelineDefaults is the Spec of the defaults of every setting.
func pipelineDefaults() provision.Spec {
	d := provision.Spec{}.WithDefaults()
	d.Alarms.Enabled = true // present, the alarms object enables them
	d.ClaimCheck.Enabled = true
	return d
}

// tableAttribute is the table object.
func tableAttribute() schema.SingleNestedAttribute {
	return defaultedObject("The outbox table: a dedicated table that the pipeline creates (the default), or an existing table that it adopts (`existing = true`). "+
		"When adopting, the pipeline enables the stream with `NEW_IMAGE` if it is off (an existing `NEW_IMAGE` or `NEW_AND_OLD_IMAGES` stream is kept; `KEYS_ONLY` and `OLD_IMAGE` are an error, since the relay needs the new image), "+
		"adds the pending index if missing and enables TTL unless the table already has a TTL attribute, which is reused. Destroying the pipeline reverts only what it added. "+awsTableLifecycle,
		map[string]schema.Attribute{
			"existing":      boolSetting("Adopt the existing table `name` instead of creating a dedicated one. Outbox items then sit beside the application's items, under their aggregate's partition key. Changing it replaces the pipeline."),
			"name":          optionalStringAttr("Name of the table. Required when `existing`; for a dedicated table it defaults to `<name>-outbox`. Changing it replaces the pipeline."),
			"partition_key": stringSetting("Partition key attribute (a string). An adopted table must have this key. Changing it replaces the pipeline."),
			"sort_key":      stringSetting("Sort key attribute (a string). An adopted table must have this key. Changing it replaces the pipeline."),
			"sort_key_prefix": stringSetting("Prefix of the sort key of every outbox item. The event source mapping's filter passes only inserts of items with this prefix to the relay, " +
				"so the application's own items never invoke it."),
			"ttl_attribute": stringSetting("TTL attribute (Unix seconds) of published items. On an adopted table that already has TTL enabled, its own attribute is used instead (see `ttl_attribute_in_use`). " +
				"Changing it replaces the pipeline."),
			"deletion_protection":    boolSetting("Deletion protection of a dedicated table, as `aws_dynamodb_table`'s `deletion_protection_enabled`. Destroying the pipeline turns it off only once the table holds no `PENDING` or `FAILED` event, or under `force_destroy`. Ignored for an adopted table."),
			"kms_key_arn":            optionalStringAttr("ARN of a customer managed KMS key that encrypts a dedicated table (`server_side_encryption` of `aws_dynamodb_table`); unset uses the AWS owned key. Changed in place. Not allowed on an adopted table."),
			"point_in_time_recovery": boolSetting("Point-in-time recovery (continuous backups) of a dedicated table. Ignored for an adopted table."),
			"replica_regions": schema.SetAttribute{Optional: true, ElementType: types.StringType, Validators: []validator.Set{setvalidator.SizeAtLeast(1)},
				MarkdownDescription: "Regions of the replicas of a dedicated table besides the provider's own Region, as `aws_dynamodb_table`'s `replica` blocks: the table is then a global table (version 2019.11.21, multi-Region eventual consistency) with a `NEW_AND_OLD_IMAGES` stream, as global tables need. " +
					"Changed in place, one replica at a time: a replica added is ACTIVE before apply ends, and a replica removed is deleted with the items it holds (those written in other Regions stay in them). " +
					"Run a pipeline in each Region that publishes (`multi_region`), adopting its replica with `table.existing`. Unset (null), the table has no replicas. Not allowed on an adopted table, whose replicas are its owner's."},
		})
}

// publishedAttribute is the published object.
func publishedAttribute() schema.SingleNestedAttribute {
	return defaultedObject("What the relay does with an item once its event is published.",
		map[string]schema.Attribute{
			"action":   stringSetting("`mark` (status `PUBLISHED`, removed from the pending index, expiring after `ttl_days`) or `delete`."),
			"ttl_days": intSetting("Days a marked item is kept before DynamoDB TTL deletes it: {limit}. Ignored with `delete`. The objects of published events in the claim-check bucket (`claim_check`) expire after as many days, at least 1, in either action."),
		})
}

// orderingAttribute is the ordering object.
func orderingAttribute() schema.SingleNestedAttribute {
	return defaultedObject("Ordered delivery per aggregate, for a FIFO target (an SNS FIFO topic or an SQS FIFO queue). See the record contract guide's ordered events.",
		map[string]schema.Attribute{
			"enabled": boolSetting("Publish each ordering key's events in the order of their sequence, and none before the one before it is published: " +
				"the relay, the reconciler and `outbox requeue` and `replay` hold an event until its predecessor is published, a failed event holds its own key only " +
				"(`outbox failed` and `outbox status` show the key and what waits behind it; `outbox requeue` or `outbox skip` releases it), " +
				"and each key's progress is kept in a cursor item in the table. The FIFO message group is the event's ordering key (without one, the item's partition key, as with ordering off). " +
				"Events written without a sequence are published as before. Switching it on or off strands nothing: a key without a cursor starts at its lowest pending event."),
		})
}

// pendingIndexAttribute is the pending_index object.
func pendingIndexAttribute() schema.SingleNestedAttribute {
	return defaultedObject("The sparse, sharded global secondary index of pending items that the reconciler queries.",
		map[string]schema.Attribute{
			"name": stringSetting("Name of the index. On a dedicated table a new name is built in place: the new index is created (DynamoDB backfills it with the pending items), " +
				"the functions switch to it, then the old one is dropped. On an adopted table changing it replaces the pipeline."),
			"shards": intSetting("Number of index partitions (`PENDING#0..n-1`), {limit}; each takes up to 1,000 writes a second. " +
				"Lowering it strands nothing: the reconciler keeps querying the higher shards until they are empty (checked on each apply)."),
			"enabled": boolSetting("Keep the pending index. `false` is allowed only with a dedicated table and `published.action = \"delete\"`: the table then holds only pending and failed items, " +
				"and the reconciler finds old pending items with a parallel `Scan` instead (one write unit less per event). Switching it is an update in place: the index is built (DynamoDB backfills it) or dropped after the functions switch."),
		})
}

// reconcilerAttribute is the reconciler object.
func reconcilerAttribute() schema.SingleNestedAttribute {
	return defaultedObject("The reconciler: a function run on a schedule that republishes pending items older than `min_age_seconds` (missed by the stream, or dead-lettered).",
		map[string]schema.Attribute{
			"enabled":                      boolSetting("Create the reconciler. Disabling it removes the function, its schedule and roles."),
			"schedule_expression":          stringSetting("EventBridge Scheduler expression, `rate(...)` or `cron(...)`."),
			"schedule_timezone":            stringSetting("IANA time zone of a `cron(...)` schedule, as `aws_scheduler_schedule`'s `schedule_expression_timezone`."),
			"flexible_time_window_minutes": intSetting("Minutes by which Scheduler may delay a run (its flexible time window): {limit}."),
			"schedule_group":               stringSetting("Existing EventBridge Scheduler group of the schedule (`aws_scheduler_schedule_group`). Changing it moves the schedule (it is recreated in the new group)."),
			"max_workers": intSetting("Most reconciler runs at once while a backlog lasts (after an outage longer than the stream's 24 hours), {limit}: " +
				"a run that cannot publish its backlog leases its share of the pending index shards and starts workers, asynchronous invocations of its own function, for the others; " +
				"a reserved concurrency of the reconciler function, when one is set, bounds them too. " +
				"An ordered pipeline's run starts no workers (a key's events are on every shard), only a successor while a backlog lasts."),
			"max_events_per_second": intSetting("Events the reconciler's runs publish a second, together: divided among `max_workers`, or all of it for an ordered pipeline's one run; a throttled publish halves a run's rate, which recovers gradually. {limit}: " +
				"1000, or 3000 for a standard SQS queue, under the target's default AWS quotas."),
			"min_age_seconds":    intSetting("Age a pending item must reach before the reconciler republishes it, {limit}; longer than the stream's usual delivery delay."),
			"memory_size":        intSetting("Memory of the reconciler function, {limit}. Lambda gives CPU in proportion to memory, one vCPU at " + strconv.Itoa(provision.LambdaMBPerVCPU) + " MB, and a run's CPU bounds how fast it publishes a backlog."),
			"timeout":            intSetting("Timeout of the reconciler function, {limit}."),
			"log_retention_days": intSetting("Retention of the reconciler's log group in days, one of the values CloudWatch Logs accepts: {limit}."),
		})
}

// deadLetterAttribute is the dead_letter object.
func deadLetterAttribute() schema.SingleNestedAttribute {
	return defaultedObject("The SQS queue that receives the metadata of batches whose retries ran out. The items themselves stay pending.",
		map[string]schema.Attribute{
			"message_retention_seconds": intSetting("Retention of the queue, {limit}."),
			"kms_master_key_id":         optionalStringAttr("KMS key (key ARN, key id, alias name or alias ARN) that encrypts the queue; unset uses SQS-managed encryption (SSE-SQS). The relay's role gets `kms:GenerateDataKey` and `kms:Decrypt` on it (an alias through the `kms:ResourceAliases` condition): Lambda sends the failed batches' metadata with that role. The key's policy must allow the role as well."),
		})
}

// alarmsAttribute is the alarms object.
func alarmsAttribute() schema.SingleNestedAttribute {
	return optionalObject("CloudWatch alarms on the pipeline, created, updated and deleted with it, and tagged like its other components: "+
		"`<name>-dlq-not-empty` (`AWS/SQS` `ApproximateNumberOfMessagesVisible` of the dead-letter queue above 0: batches ran out of retries), "+
		"`<name>-relay-errors` (`AWS/Lambda` `Errors` of the relay function), "+
		"`<name>-iterator-age` (`AWS/Lambda` `IteratorAge` of the relay: it falls behind the stream) and, with the reconciler, "+
		"`<name>-oldest-pending-age` (the reconciler's `Outbox` `OldestPendingAge` metric, dimension `FunctionName`, above `oldest_pending_age_threshold_seconds`: behind, events wait; its period is the reconciler's schedule) and "+
		"`<name>-stuck` (metric math: `OldestPendingAge` above the same threshold while neither function's `EventsPublished` counts an event in the period: stuck, nothing goes out; raised alone, `oldest_pending_age` means catching up). "+
		"Besides, for the relay (and, with the reconciler, `<name>-reconciler-events-failed` and `<name>-reconciler-environment-errors` for it): `<name>-events-failed` (`Outbox` `EventsFailed` above 0: poison events were marked `FAILED` and wait for a person) and "+
		"`<name>-environment-errors` (`Outbox` `PublishErrors` with `ErrorClass = environment` above 0: a missing permission, bus or topic, or a disabled KMS key; the events stay pending until it is fixed). "+
		"With `multi_region`: in ordered mode `<name>-ordering-conflicts` (the `Outbox` `OrderingConflicts` of both functions above 0, a warning: an ordering key written in two Regions at once, its events published out of order, none lost) and, with the reconciler, "+
		"`<name>-takeover-unavailable` (the reconciler's `Outbox` `TakeoverUnavailable` above 0: a run could not read or write the Regions' heartbeats and takeover claims and swept only its own Region). "+
		"The relay's alarms have a 60-second period. Unset (null), there are no alarms; removing it deletes them.",
		map[string]schema.Attribute{
			"enabled":                        boolSetting("Create the alarms; `false` deletes them and keeps the settings."),
			"sns_topic_arn":                  optionalStringAttr("SNS topic notified when an alarm goes to `ALARM` and back to `OK`. Unset, the alarms notify nothing."),
			"relay_errors_threshold":         intSetting("Relay function errors per minute, for `evaluation_periods` minutes, that raise `relay_errors`: {limit}."),
			"iterator_age_threshold_seconds": intSetting("Age of the last stream record the relay read above which `iterator_age` raises, {limit} (a stream keeps records 24 hours)."),
			"oldest_pending_age_threshold_seconds": intSetting("Age of the oldest pending event, as the reconciler reports it, above which `oldest_pending_age` raises, and `stuck` when nothing is published, {limit}. " +
				"More than `reconciler.min_age_seconds`: the reconciler reports only events older than that, and republishes them."),
			"evaluation_periods": intSetting("Consecutive periods over the threshold that raise `relay_errors`, `iterator_age`, `oldest_pending_age` and `stuck`, {limit}; " +
				"a period times this number is at most one day. `dlq_not_empty` raises on the first message."),
			"treat_missing_data": stringSetting("How `relay_errors`, `iterator_age`, `oldest_pending_age` and `stuck` treat periods without data: {limit}. " +
				"`dlq_not_empty` always treats them as not breaching, since SQS stops sending the metrics of an inactive queue."),
		})
}

// iamAttribute is the iam object.
func iamAttribute() schema.SingleNestedAttribute {
	return defaultedObject("Settings of every role the pipeline creates (relay, reconciler and scheduler roles).",
		map[string]schema.Attribute{
			"permissions_boundary": optionalStringAttr("ARN of a managed policy set as the permissions boundary of every role, as `aws_iam_role`'s `permissions_boundary`. It must allow what the roles' policies grant, or the functions fail. Unset, the roles have none. Changed in place."),
			"path":                 stringSetting("Path of every role, as `aws_iam_role`'s `path`. IAM cannot move a role: changing it recreates the roles in place of the old ones, and the functions and the schedule switch to them."),
		})
}

// relayAttribute is the relay object: the relay function and its event source mapping.
func relayAttribute() schema.SingleNestedAttribute {
	attrs := map[string]schema.Attribute{
		"batch_size":                 intSetting("Largest batch of stream records per invocation, {limit}."),
		"batching_window_seconds":    intSetting("How long the mapping gathers records before invoking, {limit}."),
		"parallelization_factor":     intSetting("Concurrent batches per shard, {limit}. Events of one item stay ordered; in ordered mode each ordering key stays ordered at any value. Raise it, with `batch_size`, to catch up a backlog (see the operations guide)."),
		"maximum_retry_attempts":     intSetting("Retries of a failed batch before its metadata goes to the dead-letter queue, {limit}. The items stay pending and the reconciler republishes them."),
		"maximum_record_age_seconds": intSetting("Age after which a record is no longer retried: {limit}."),
		"bisect_on_error":            boolSetting("Split a failed batch in two and retry each half."),
		"memory_size":                intSetting("Memory of the relay function, {limit}."),
		"timeout":                    intSetting("Timeout of the relay function, {limit}."),
		"architecture":               stringSetting("Instruction set of both functions: {limit}."),
		"log_retention_days":         intSetting("Retention of the relay's log group in days, one of the values CloudWatch Logs accepts: {limit}."),
		"reserved_concurrency":       optionalIntAttr("Reserved concurrency of the relay function, {limit}; unset leaves it unreserved."),
		"tracing_mode":               stringSetting("X-Ray tracing of both functions, as `aws_lambda_function`'s `tracing_config.mode`: {limit}. Active adds `xray:PutTraceSegments` and `xray:PutTelemetryRecords` to the roles."),
		"kms_key_arn":                optionalStringAttr("ARN of a customer managed KMS key that encrypts both functions' environment variables; unset uses Lambda's key. The roles get `kms:Decrypt` on it."),
		"logging":                    relayLoggingAttribute(),
		"vpc_config":                 relayVPCConfigAttribute(),
	}
	return defaultedObject("The relay function and its event source mapping on the table's stream.", attrs)
}

// relayLoggingAttribute is the relay.logging object.
func relayLoggingAttribute() schema.SingleNestedAttribute {
	return defaultedObject("Logging of both functions, as `aws_lambda_function`'s `logging_config`. The log levels need `log_format = \"JSON\"`.",
		map[string]schema.Attribute{
			"log_format":            stringSetting("{limit}."),
			"application_log_level": optionalStringAttr("Lowest level of the functions' own logs that Lambda keeps: {limit}. With `JSON`, unset means `INFO`."),
			"system_log_level":      optionalStringAttr("Lowest level of Lambda's platform logs that it keeps: {limit}. With `JSON`, unset means `INFO`."),
		})
}

// multiRegionAttribute is the multi_region object.
func multiRegionAttribute() schema.SingleNestedAttribute {
	return optionalObject("Makes the pipeline one of a multi-Region outbox on a DynamoDB global table (multi-Region eventual consistency, the default mode), one pipeline per Region, each with the same `regions`. "+
		"Each Region publishes the events written in it (the writer stamps each with its Region, `outboxOrigin`): the event source mapping's filter passes only the inserts of this Region's events, so a replicated insert never invokes the relay, "+
		"and the reconciler republishes only this Region's pending events. The first Region, the primary, also publishes the events without origin (written before the writer stamped it). "+
		"Each reconciler run writes its Region's heartbeat; when a Region's heartbeat is older than `takeover_after_seconds`, the next Region in `regions` whose heartbeat is fresh claims it and publishes its pending events until the Region has been back for one takeover delay; events published in the takeover window may be published twice, and consumers drop them by event id. "+
		"Give each Region's pipeline a `name` of its own (`orders-us-east-1`): the roles are named after it, and IAM names are global. "+
		"The global table is one pipeline's dedicated table with `table.replica_regions`, each other Region's pipeline adopting its replica (`table.existing`), or a global table managed elsewhere (such as `aws_dynamodb_table` with `replica` blocks) that every Region's pipeline adopts. A global table with multi-Region strong consistency (MRSC) is refused: it refuses the transactions the writer commits. "+
		"Unset (null), the pipeline publishes every event of the table.",
		map[string]schema.Attribute{
			"regions": schema.ListAttribute{Required: true, ElementType: types.StringType,
				MarkdownDescription: "The Regions of the global table's replicas that run a pipeline, at least 2, each once, in the same order in every Region; the first is the primary. The provider's own Region must be one of them."},
			"takeover_after_seconds": intSetting("How old a Region's heartbeat gets before the Region is silent and the next fresh Region in `regions` takes its events over, {limit}: " +
				"a few reconciler intervals (the default is three intervals of the default schedule), so that one late or failed run is not a takeover. The same in every Region."),
			"takeover_settle_seconds": intSetting("How long a Region that claimed a silent Region waits before it publishes the Region's events, so that a claim written at the same time in another Region reaches it and one of them steps back, {limit}; below `takeover_after_seconds`."),
		})
}

// relayVPCConfigAttribute is the relay.vpc_config object.
func relayVPCConfigAttribute() schema.SingleNestedAttribute {
	return optionalObject("Attaches both functions to a VPC, as `aws_lambda_function`'s `vpc_config`. The roles get the EC2 network interface actions of `AWSLambdaVPCAccessExecutionRole`, scoped to the account's network interfaces and these subnets and security groups (`ec2:DescribeNetworkInterfaces`, which has no resource type, on `*`). "+
		"The subnets need a route to DynamoDB, SQS and the target (VPC endpoints or a NAT gateway). Unset (null), the functions are in no VPC; removing it detaches them.",
		map[string]schema.Attribute{
			"subnet_ids": schema.SetAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Subnet ids (up to 16) of the functions' network interfaces; unset means none.",
				Validators: []validator.Set{setvalidator.SizeAtMost(16)}},
			"security_group_ids": schema.SetAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Security group ids (up to 5) of the functions' network interfaces; unset means none.",
				Validators: []validator.Set{setvalidator.SizeAtMost(5)}},
		})
}

// defaultedObject is an optional object whose omission means the defaults
// of its attributes: it plans, and the state holds, the object of those
// defaults.
func defaultedObject(desc string, attrs map[string]schema.Attribute) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true, Computed: true, Attributes: attrs,
		Default:             objectdefault.StaticValue(defaultObject(attrs)),
		MarkdownDescription: desc + " Omitted, it is the object of its attributes' defaults.",
	}
}

// optionalObject is an optional object whose omission turns its feature
// off: it is null when omitted.
func optionalObject(desc string, attrs map[string]schema.Attribute) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{Optional: true, Attributes: attrs, MarkdownDescription: desc}
}

// defaultObject is the object of the attributes' own defaults, null where
// an attribute has none.
func defaultObject(attrs map[string]schema.Attribute) types.Object {
	ctx := context.Background()
	typs := make(map[string]attr.Type, len(attrs))
	vals := make(map[string]attr.Value, len(attrs))
	for name, a := range attrs {
		typs[name] = a.GetType()
		v, ok := attributeDefault(ctx, path.Root(name), a)
		if !ok {
			v = nullValue(ctx, a.GetType())
		}
		vals[name] = v
	}
	return types.ObjectValueMust(typs, vals)
}

// nullValue is the null value of a type.
func nullValue(ctx context.Context, t attr.Type) attr.Value {
	v, err := t.ValueFromTerraform(ctx, tftypes.NewValue(t.TerraformType(ctx), nil))
	if err != nil {
		panic(fmt.Sprintf("null value of %s: %v", t, err))
	}
	return v
}
