package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/pipeline"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

var (
	_ resource.Resource                   = &PipelineResource{}
	_ resource.ResourceWithConfigure      = &PipelineResource{}
	_ resource.ResourceWithImportState    = &PipelineResource{}
	_ resource.ResourceWithValidateConfig = &PipelineResource{}
	_ resource.ResourceWithModifyPlan     = &PipelineResource{}
)

// Default operation timeouts.
const (
	defaultCreateTimeout = 30 * time.Minute
	defaultUpdateTimeout = 30 * time.Minute
	defaultDeleteTimeout = 30 * time.Minute
)

// NewPipelineResource returns the outbox_pipeline resource.
func NewPipelineResource() resource.Resource { return &PipelineResource{} }

// PipelineResource is the outbox_pipeline resource: a complete
// transactional outbox on one DynamoDB table, provisioned by package
// pipeline.
type PipelineResource struct {
	data *ProviderData
	// code is the relay package; tests may replace it.
	code pipeline.RelayCode
}

// Metadata names the resource.
func (r *PipelineResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pipeline"
}

// Configure receives the provider's AWS configuration.
func (r *PipelineResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return
	}
	data, ok := req.ProviderData.(*ProviderData)
	if !ok {
		resp.Diagnostics.AddError("Unexpected provider data", fmt.Sprintf("expected *ProviderData, got %T: report this as a bug of the provider", req.ProviderData))
		return
	}
	r.data = data
}

func (r *PipelineResource) clients() *pipeline.Clients {
	return pipeline.NewClients(r.data.AWS, r.relayCode())
}

func (r *PipelineResource) relayCode() pipeline.RelayCode {
	if r.code.Zip == nil || r.code.SHA256 == nil {
		return pipeline.RelayCode{Zip: relaypackage.Zip, SHA256: relaypackage.SHA256}
	}
	return r.code
}

func (r *PipelineResource) defaultTags() map[string]string {
	if r.data == nil {
		return nil
	}
	return r.data.DefaultTags
}

func computedString(desc string, stable bool) schema.StringAttribute {
	a := schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	if stable {
		a.PlanModifiers = []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	}
	return a
}

func optIntAttr(desc string, def int64) schema.Int64Attribute {
	return schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(def), MarkdownDescription: desc}
}

func optStringAttr(desc, def string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(def), MarkdownDescription: desc}
}

const awsTableLifecycle = "If the table is also managed with `hashicorp/aws`'s `aws_dynamodb_table`, keep the two from undoing each other's changes with " +
	"`lifecycle { ignore_changes = [stream_enabled, stream_view_type, global_secondary_index, attribute, ttl, tags[\"outbox:adopted-by\"], tags_all[\"outbox:adopted-by\"]] }` on the table. " +
	"An adopted table is tagged `outbox:adopted-by = <name>`: a second pipeline refuses to adopt it (or another pipeline's dedicated table), so that destroying one never removes what the other uses."

// Schema describes the resource.
func (r *PipelineResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A complete transactional outbox on a DynamoDB table: the table's stream and sparse pending index, " +
			"a relay Lambda function invoked by a filtered event source mapping that publishes every outbox item to EventBridge or SNS, " +
			"its dead-letter queue, and a scheduled reconciler that republishes what the stream missed. " +
			"Applications write events with the `outbox` Go package (or any writer following its record contract) in the same `TransactWriteItems` as their data.\n\n" +
			"Every component is named after `name`. The relay code is embedded in the provider: a new provider release with new relay code plans an in-place update of the functions (`relay_package_sha256`).",
		Attributes: map[string]schema.Attribute{
			"id": computedString("The pipeline's name, its import id.", true),
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: fmt.Sprintf("Name of the pipeline, the prefix of every component it creates (`<name>-outbox` table, `<name>-relay` function, `<name>-relay-dlq` queue, `<name>-reconciler`...). "+
					"1 to %d letters, digits, hyphens and underscores. Changing it replaces the pipeline.", pipeline.MaxNameLength),
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"tags": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Tags of every component that takes tags (not of an adopted table). Merged with the provider's `default_tags`; these win on conflicts.",
			},
			"force_destroy": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Let destroy (or a replacement) delete a dedicated table that still holds `PENDING` or `FAILED` events, which are then lost, as `aws_s3_bucket`'s `force_destroy`. " +
					"Without it, destroy fails with the counts: deliver the events first (`outbox drain <name>`, `outbox requeue <name>`). Apply it before the destroy: destroy reads the value in the state.",
			},
			"tags_all": schema.MapAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The tags applied: the provider's `default_tags` merged with `tags`.",
			},
			"table_name":                computedString("Name of the outbox table.", false),
			"table_arn":                 computedString("ARN of the outbox table.", true),
			"stream_arn":                computedString("ARN of the table's stream that the relay reads.", true),
			"pending_index_arn":         computedString("ARN of the sparse pending index.", true),
			"ttl_attribute_in_use":      computedString("The table's TTL attribute that published items expire on: `table.ttl_attribute`, or the attribute an adopted table already had.", true),
			"target_arn":                computedString("ARN of the event bus or topic the pipeline publishes to.", false),
			"dead_letter_queue_url":     computedString("URL of the relay's dead-letter queue (`<name>-relay-dlq`).", true),
			"dead_letter_queue_arn":     computedString("ARN of the relay's dead-letter queue.", true),
			"relay_function_name":       computedString("Name of the relay function (`<name>-relay`).", true),
			"relay_function_arn":        computedString("ARN of the relay function.", true),
			"relay_role_arn":            computedString("ARN of the relay function's execution role.", true),
			"relay_log_group":           computedString("Log group of the relay function.", true),
			"event_source_mapping_uuid": computedString("UUID of the event source mapping of the relay on the stream.", true),
			"reconciler_function_arn":   computedString("ARN of the reconciler function (`<name>-reconciler`); null when the reconciler is disabled.", true),
			"reconciler_role_arn":       computedString("ARN of the reconciler function's execution role.", true),
			"reconciler_log_group":      computedString("Log group of the reconciler function.", true),
			"scheduler_role_arn":        computedString("ARN of the role that EventBridge Scheduler assumes to invoke the reconciler.", true),
			"schedule_arn":              computedString("ARN of the reconciler's EventBridge Scheduler schedule (`<name>-reconcile`).", true),
			"relay_package_sha256": computedString("Base64 SHA-256 of the relay package the functions run. "+
				"It changes when the provider ships new relay code, and the next plan updates the functions' code in place.", false),
			"alarm_arns": schema.MapAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "ARNs of the CloudWatch alarms by key: `dlq_not_empty`, `relay_errors`, `iterator_age`, `events_failed`, `environment_errors` and, with the reconciler, `oldest_pending_age`, `reconciler_events_failed` and `reconciler_environment_errors`. " +
					"Null without an `alarms` block.",
			},
		},
		Blocks: map[string]schema.Block{
			"table": schema.SingleNestedBlock{
				MarkdownDescription: "The outbox table: a dedicated table that the pipeline creates (the default), or an existing table that it adopts (`existing = true`). " +
					"When adopting, the pipeline enables the stream with `NEW_IMAGE` if it is off (an existing `NEW_IMAGE` or `NEW_AND_OLD_IMAGES` stream is kept; `KEYS_ONLY` and `OLD_IMAGE` are an error, since the relay needs the new image), " +
					"adds the pending index if missing and enables TTL unless the table already has a TTL attribute, which is reused. Destroying the pipeline reverts only what it added. " + awsTableLifecycle,
				Attributes: map[string]schema.Attribute{
					"existing": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(false),
						MarkdownDescription: "Adopt the existing table `name` instead of creating a dedicated one. Outbox items then sit beside the application's items, under their aggregate's partition key. Changing it replaces the pipeline.",
					},
					"name": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Name of the table. Required when `existing`; for a dedicated table it defaults to `<name>-outbox`. Changing it replaces the pipeline.",
					},
					"partition_key": optStringAttr("Partition key attribute (a string). An adopted table must have this key. Changing it replaces the pipeline.", outbox.DefaultPartitionKey),
					"sort_key":      optStringAttr("Sort key attribute (a string). An adopted table must have this key. Changing it replaces the pipeline.", outbox.DefaultSortKey),
					"sort_key_prefix": optStringAttr("Prefix of the sort key of every outbox item. The event source mapping's filter passes only inserts of items with this prefix to the relay, "+
						"so the application's own items never invoke it.", outbox.DefaultSortKeyPrefix),
					"ttl_attribute": optStringAttr("TTL attribute (Unix seconds) of published items. On an adopted table that already has TTL enabled, its own attribute is used instead (see `ttl_attribute_in_use`). "+
						"Changing it replaces the pipeline.", outbox.DefaultTTLAttribute),
					"deletion_protection": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(true),
						MarkdownDescription: "Deletion protection of a dedicated table, as `aws_dynamodb_table`'s `deletion_protection_enabled`. Destroying the pipeline turns it off only once the table holds no `PENDING` or `FAILED` event, or under `force_destroy`. Ignored for an adopted table.",
					},
					"kms_key_arn": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "ARN of a customer managed KMS key that encrypts a dedicated table (`server_side_encryption` of `aws_dynamodb_table`); unset uses the AWS owned key. Changed in place. Not allowed on an adopted table.",
					},
					"point_in_time_recovery": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(true),
						MarkdownDescription: "Point-in-time recovery (continuous backups) of a dedicated table. Ignored for an adopted table.",
					},
				},
			},
			"target": schema.SingleNestedBlock{
				MarkdownDescription: "Where the relay publishes: an EventBridge bus (`event_bus`, the account's `default` bus when the block is absent) or a standard SNS topic (`topic_arn`).",
				Attributes: map[string]schema.Attribute{
					"event_bus": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Name or ARN of the EventBridge bus. Defaults to `default`. Conflicts with `topic_arn`.",
						Validators:          []validator.String{stringvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName("topic_arn"))},
					},
					"topic_arn": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "ARN of a standard (not FIFO) SNS topic. The message body is an EventBridge-style envelope. Conflicts with `event_bus`.",
					},
				},
			},
			"relay": schema.SingleNestedBlock{
				MarkdownDescription: "The relay function and its event source mapping on the table's stream.",
				Attributes: map[string]schema.Attribute{
					"batch_size":                 optIntAttr("Largest batch of stream records per invocation, 1 to 10000.", pipeline.DefaultBatchSize),
					"batching_window_seconds":    optIntAttr("How long the mapping gathers records before invoking, 0 to 300 seconds.", 0),
					"parallelization_factor":     optIntAttr("Concurrent batches per shard, 1 to 10. Events of one item stay ordered.", pipeline.DefaultParallelizationFactor),
					"maximum_retry_attempts":     optIntAttr("Retries of a failed batch before its metadata goes to the dead-letter queue, -1 (until the record expires) to 10000. The items stay pending and the reconciler republishes them.", pipeline.DefaultMaximumRetryAttempts),
					"maximum_record_age_seconds": optIntAttr("Age after which a record is no longer retried: -1 (no limit) or 60 to 604800 seconds.", pipeline.DefaultMaximumRecordAgeSeconds),
					"bisect_on_error": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(pipeline.DefaultBisectBatchOnError),
						MarkdownDescription: "Split a failed batch in two and retry each half.",
					},
					"memory_size":  optIntAttr("Memory of the relay function, 128 to 10240 MB.", pipeline.DefaultRelayMemory),
					"timeout":      optIntAttr("Timeout of the relay function, 1 to 900 seconds.", pipeline.DefaultRelayTimeout),
					"architecture": optStringAttr("Instruction set of both functions: `arm64` or `x86_64`.", string(pipeline.DefaultArchitecture)),
					"log_retention_days": optIntAttr("Retention of the relay's log group, one of the values CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...).",
						pipeline.DefaultLogRetentionDays),
					"reserved_concurrency": schema.Int64Attribute{
						Optional:            true,
						MarkdownDescription: "Reserved concurrency of the relay function; unset leaves it unreserved.",
					},
					"tracing_mode": optStringAttr("X-Ray tracing of both functions, as `aws_lambda_function`'s `tracing_config.mode`: `PassThrough` or `Active`. Active adds `xray:PutTraceSegments` and `xray:PutTelemetryRecords` to the roles.", pipeline.DefaultTracingMode),
					"kms_key_arn": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "ARN of a customer managed KMS key that encrypts both functions' environment variables; unset uses Lambda's key. The roles get `kms:Decrypt` on it.",
					},
				},
				Blocks: map[string]schema.Block{
					"logging": schema.SingleNestedBlock{
						MarkdownDescription: "Logging of both functions, as `aws_lambda_function`'s `logging_config`. The log levels need `log_format = \"JSON\"`.",
						Attributes: map[string]schema.Attribute{
							"log_format": optStringAttr("`Text` or `JSON`.", pipeline.DefaultLogFormat),
							"application_log_level": schema.StringAttribute{
								Optional:            true,
								MarkdownDescription: "Lowest level of the functions' own logs that Lambda keeps: `TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR` or `FATAL`. With `JSON`, unset means `INFO`.",
							},
							"system_log_level": schema.StringAttribute{
								Optional:            true,
								MarkdownDescription: "Lowest level of Lambda's platform logs that it keeps: `DEBUG`, `INFO` or `WARN`. With `JSON`, unset means `INFO`.",
							},
						},
					},
					"vpc_config": schema.SingleNestedBlock{
						MarkdownDescription: "Attaches both functions to a VPC, as `aws_lambda_function`'s `vpc_config`. The roles get the EC2 network interface permissions of `AWSLambdaVPCAccessExecutionRole`. " +
							"The subnets need a route to DynamoDB, SQS and the target (VPC endpoints or a NAT gateway). Removing the block detaches them.",
						Attributes: map[string]schema.Attribute{
							"subnet_ids":         schema.SetAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Subnet ids (up to 16)."},
							"security_group_ids": schema.SetAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Security group ids (up to 5)."},
						},
					},
				},
			},
			"published": schema.SingleNestedBlock{
				MarkdownDescription: "What the relay does with an item once its event is published.",
				Attributes: map[string]schema.Attribute{
					"action": optStringAttr("`mark` (status `PUBLISHED`, removed from the pending index, expiring after `ttl_days`) or `delete`.", string(config.ActionMark)),
					"ttl_days": optIntAttr("Days a marked item is kept before DynamoDB TTL deletes it; 0 keeps it forever. Ignored with `delete`.",
						defaultPublishedTTLDays),
				},
			},
			"pending_index": schema.SingleNestedBlock{
				MarkdownDescription: "The sparse, sharded global secondary index of pending items that the reconciler queries.",
				Attributes: map[string]schema.Attribute{
					"name": optStringAttr("Name of the index. On a dedicated table a new name is built in place: the new index is created (DynamoDB backfills it with the pending items), "+
						"the functions switch to it, then the old one is dropped. On an adopted table changing it replaces the pipeline.", outbox.DefaultPendingIndexName),
					"shards": optIntAttr("Number of index partitions (`PENDING#0..n-1`), 1 to 256; each takes up to 1,000 writes a second. "+
						"Lowering it strands nothing: the reconciler keeps querying the higher shards until they are empty (checked on each apply).", outbox.DefaultPendingShards),
					"enabled": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(true),
						MarkdownDescription: "Keep the pending index. `false` is allowed only with a dedicated table and `published.action = \"delete\"`: the table then holds only pending and failed items, " +
							"and the reconciler finds old pending items with a parallel `Scan` instead (one write unit less per event). Switching it is an update in place: the index is built (DynamoDB backfills it) or dropped after the functions switch.",
					},
				},
			},
			"reconciler": schema.SingleNestedBlock{
				MarkdownDescription: "The reconciler: a function run on a schedule that republishes pending items older than `min_age_seconds` (missed by the stream, or dead-lettered).",
				Attributes: map[string]schema.Attribute{
					"enabled": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(true),
						MarkdownDescription: "Create the reconciler. Disabling it removes the function, its schedule and roles.",
					},
					"schedule_expression":          optStringAttr("EventBridge Scheduler expression, `rate(...)` or `cron(...)`.", pipeline.DefaultScheduleExpression),
					"schedule_timezone":            optStringAttr("IANA time zone of a `cron(...)` schedule, as `aws_scheduler_schedule`'s `schedule_expression_timezone`.", pipeline.DefaultScheduleTimezone),
					"flexible_time_window_minutes": optIntAttr("Minutes by which Scheduler may delay a run (its flexible time window, 1 to 1440); 0 runs exactly on schedule.", 0),
					"schedule_group":               optStringAttr("Existing EventBridge Scheduler group of the schedule (`aws_scheduler_schedule_group`). Changing it moves the schedule (it is recreated in the new group).", pipeline.ScheduleGroup),
					"min_age_seconds":              optIntAttr("Age in seconds a pending item must reach before the reconciler republishes it; longer than the stream's usual delivery delay.", defaultMinAgeSeconds),
					"memory_size":                  optIntAttr("Memory of the reconciler function, 128 to 10240 MB.", pipeline.DefaultReconcilerMemory),
					"timeout":                      optIntAttr("Timeout of the reconciler function, 1 to 900 seconds.", pipeline.DefaultReconcilerTimeout),
					"log_retention_days":           optIntAttr("Retention of the reconciler's log group.", pipeline.DefaultLogRetentionDays),
				},
			},
			"dead_letter": schema.SingleNestedBlock{
				MarkdownDescription: "The SQS queue that receives the metadata of batches whose retries ran out. The items themselves stay pending.",
				Attributes: map[string]schema.Attribute{
					"message_retention_seconds": optIntAttr("Retention of the queue, 60 to 1209600 seconds.", pipeline.DefaultQueueRetentionSeconds),
					"kms_master_key_id": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "KMS key that encrypts the queue; unset uses SQS-managed encryption (SSE-SQS).",
					},
				},
			},
			"alarms": schema.SingleNestedBlock{
				MarkdownDescription: "CloudWatch alarms on the pipeline, created, updated and deleted with it, and tagged like its other components: " +
					"`<name>-dlq-not-empty` (`AWS/SQS` `ApproximateNumberOfMessagesVisible` of the dead-letter queue above 0: batches ran out of retries), " +
					"`<name>-relay-errors` (`AWS/Lambda` `Errors` of the relay function), " +
					"`<name>-iterator-age` (`AWS/Lambda` `IteratorAge` of the relay: it falls behind the stream) and, with the reconciler, " +
					"`<name>-oldest-pending-age` (the reconciler's `Outbox` `OldestPendingAge` metric, dimension `FunctionName`: events stay unpublished; its period is the reconciler's schedule). " +
					"Besides, for the relay (and, with the reconciler, `<name>-reconciler-events-failed` and `<name>-reconciler-environment-errors` for it): `<name>-events-failed` (`Outbox` `EventsFailed` above 0: poison events were marked `FAILED` and wait for a person) and " +
					"`<name>-environment-errors` (`Outbox` `PublishErrors` with `ErrorClass = environment` above 0: a missing permission, bus or topic, or a disabled KMS key; the events stay pending until it is fixed). " +
					"The relay's alarms have a 60-second period. Without the block there are no alarms; removing it deletes them.",
				Attributes: map[string]schema.Attribute{
					"enabled": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(true),
						MarkdownDescription: "Create the alarms; `false` deletes them and keeps the settings.",
					},
					"sns_topic_arn": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "SNS topic notified when an alarm goes to `ALARM` and back to `OK`. Unset, the alarms notify nothing.",
					},
					"relay_errors_threshold": optIntAttr("Relay function errors per minute, for `evaluation_periods` minutes, that raise `relay_errors`; 1 or more.",
						pipeline.DefaultRelayErrorsThreshold),
					"iterator_age_threshold_seconds": optIntAttr("Age in seconds of the last stream record the relay read above which `iterator_age` raises, 1 to 86400 (a stream keeps records 24 hours).",
						pipeline.DefaultIteratorAgeThresholdSeconds),
					"oldest_pending_age_threshold_seconds": optIntAttr("Age in seconds of the oldest pending event, as the reconciler reports it, above which `oldest_pending_age` raises. "+
						"More than `reconciler.min_age_seconds`: the reconciler reports only events older than that, and republishes them.",
						pipeline.DefaultOldestPendingAgeThresholdSeconds),
					"evaluation_periods": optIntAttr("Consecutive periods over the threshold that raise `relay_errors`, `iterator_age` and `oldest_pending_age`; "+
						"a period times this number is at most one day. `dlq_not_empty` raises on the first message.", pipeline.DefaultAlarmEvaluationPeriods),
					"treat_missing_data": optStringAttr("How `relay_errors`, `iterator_age` and `oldest_pending_age` treat periods without data: `notBreaching`, `breaching`, `ignore` or `missing`. "+
						"`dlq_not_empty` always treats them as not breaching, since SQS stops sending the metrics of an inactive queue.", pipeline.DefaultTreatMissingData),
				},
			},
			"iam": schema.SingleNestedBlock{
				MarkdownDescription: "Settings of every role the pipeline creates (relay, reconciler and scheduler roles).",
				Attributes: map[string]schema.Attribute{
					"permissions_boundary": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "ARN of a managed policy set as the permissions boundary of every role, as `aws_iam_role`'s `permissions_boundary`. It must allow what the roles' policies grant, or the functions fail. Changed in place.",
					},
					"path": optStringAttr("Path of every role, as `aws_iam_role`'s `path`. IAM cannot move a role: changing it recreates the roles in place of the old ones, and the functions and the schedule switch to them.", "/"),
				},
			},
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

// ValidateConfig checks the configuration at plan time with the pipeline's
// own validation, reporting the attribute at fault and the fix.
func (r *PipelineResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m PipelineResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Name.IsUnknown() {
		return
	}
	var tags map[string]string
	if !m.Tags.IsUnknown() && !m.Tags.IsNull() {
		resp.Diagnostics.Append(m.Tags.ElementsAs(ctx, &tags, true)...)
	}
	if m.Table != nil && m.Table.Existing.ValueBool() && m.Table.Name.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("table").AtName("name"), "Invalid outbox pipeline configuration",
			"table.name is required with table.existing = true: name the existing table to adopt.")
		return
	}
	if diags := m.validateUnset(); diags.HasError() {
		resp.Diagnostics.Append(diags...)
		return
	}
	err := m.spec(tags, specOptions{validating: true}).Validate()
	var ve *pipeline.ValidationError
	if err == nil {
		return
	}
	if !errors.As(err, &ve) {
		resp.Diagnostics.AddError("Invalid outbox pipeline configuration", err.Error())
		return
	}
	p, ok := fieldPaths[ve.Field]
	if !ok {
		p = path.Root("name")
	}
	// A check against a value known only at apply (read as its default
	// here) waits for apply, where the pipeline validates again.
	for _, field := range append([]string{ve.Field}, ve.Related...) {
		if fp, ok := fieldPaths[field]; ok && configUnknown(ctx, req.Config, fp) {
			return
		}
	}
	resp.Diagnostics.AddAttributeError(p, "Invalid outbox pipeline configuration",
		fmt.Sprintf("%s %s: %s.", dotted(p), ve.Problem, ve.Fix))
}

// configUnknown reports whether the configuration's value at p is unknown.
func configUnknown(ctx context.Context, config tfsdk.Config, p path.Path) bool {
	var v attr.Value
	if diags := config.GetAttribute(ctx, p, &v); diags.HasError() || v == nil {
		return false
	}
	return v.IsUnknown()
}

// Attributes recorded per component of a pipeline.Drift: when a component
// is missing or changed, they are planned unknown, so that the plan shows an
// update and apply repairs the component.
var driftAttributes = map[string][]string{
	pipeline.ComponentTable:              {"table_arn", "stream_arn", "pending_index_arn", "ttl_attribute_in_use"},
	pipeline.ComponentStream:             {"stream_arn"},
	pipeline.ComponentPendingIndex:       {"pending_index_arn"},
	pipeline.ComponentTTL:                {"ttl_attribute_in_use"},
	pipeline.ComponentDeadLetterQueue:    {"dead_letter_queue_url", "dead_letter_queue_arn"},
	pipeline.ComponentRelayLogGroup:      {"relay_log_group"},
	pipeline.ComponentRelayRole:          {"relay_role_arn"},
	pipeline.ComponentRelayFunction:      {"relay_function_name", "relay_function_arn"},
	pipeline.ComponentMapping:            {"event_source_mapping_uuid"},
	pipeline.ComponentReconcilerLogGroup: {"reconciler_log_group"},
	pipeline.ComponentReconcilerRole:     {"reconciler_role_arn"},
	pipeline.ComponentReconcilerFunction: {"reconciler_function_arn"},
	pipeline.ComponentSchedulerRole:      {"scheduler_role_arn"},
	pipeline.ComponentSchedule:           {"schedule_arn"},
}

var reconcilerAttributes = []string{"reconciler_function_arn", "reconciler_role_arn", "reconciler_log_group", "scheduler_role_arn", "schedule_arn"}

// ModifyPlan computes what is known at plan time (table name, merged tags,
// the relay package's checksum, the target's ARN), plans replacements that
// AWS cannot apply in place, and turns drift found by Read into an update.
func (r *PipelineResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan PipelineResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	tags, tagsKnown, diags := mergedTags(ctx, r.defaultTags(), plan.Tags)
	resp.Diagnostics.Append(diags...)
	plan.TagsAll = types.MapUnknown(types.StringType)
	if tagsKnown {
		plan.TagsAll = tagsValue(tags)
	}
	spec := plan.spec(tags, specOptions{}).WithDefaults()
	plan.TableName = types.StringUnknown()
	if !plan.Name.IsUnknown() && (plan.Table == nil || !plan.Table.Name.IsUnknown()) {
		plan.TableName = types.StringValue(spec.Table.Name)
	}
	plan.RelayPackageSHA256 = types.StringUnknown()
	if plan.Relay == nil || !plan.Relay.Architecture.IsUnknown() {
		if sha, err := r.relayCode().SHA256(string(spec.Architecture)); err == nil {
			plan.RelayPackageSHA256 = types.StringValue(sha)
		} else {
			resp.Diagnostics.AddWarning("The relay package is not built into this provider",
				fmt.Sprintf("%v. Apply will fail: %v", err, pipeline.ErrNoRelayCode))
		}
	}
	reconcilerOn := !spec.Reconciler.Disabled
	if plan.Reconciler != nil && plan.Reconciler.Enabled.IsUnknown() {
		reconcilerOn = true
	}
	if !reconcilerOn {
		resp.Diagnostics.AddAttributeWarning(path.Root("reconciler").AtName("enabled"), "The outbox pipeline has no reconciler",
			"Without the reconciler, some events can never be delivered: records trimmed from the stream after its 24-hour retention (a mapping paused or failing that long), "+
				"and the events of batches that ran out of retries and went to the dead-letter queue. They stay PENDING in the table until the reconciler is enabled again.")
	}
	if !reconcilerOn {
		for _, a := range reconcilerAttributes {
			resp.Diagnostics.Append(setPlanString(ctx, &plan, a, types.StringNull())...)
		}
	}

	alarmsKnown := plan.Alarms == nil || (!plan.Alarms.Enabled.IsUnknown() && (plan.Reconciler == nil || !plan.Reconciler.Enabled.IsUnknown()))
	wantAlarms := map[string]bool{}
	for _, d := range pipeline.AlarmDefinitions(spec) {
		wantAlarms[d.Key] = true
	}
	plan.AlarmARNs = types.MapUnknown(types.StringType)
	if alarmsKnown && len(wantAlarms) == 0 {
		plan.AlarmARNs = types.MapNull(types.StringType)
	}

	if req.State.Raw.IsNull() {
		plan.TargetARN = types.StringUnknown()
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	var state PipelineResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	stateTags := map[string]string{}
	resp.Diagnostics.Append(state.TagsAll.ElementsAs(ctx, &stateTags, false)...)

	// Replacements, by the pipeline's own rules (defaults applied).
	for _, f := range pipeline.ReplacementFields(state.spec(stateTags, specOptions{}), spec) {
		if p, ok := replacementPaths[f]; ok {
			resp.RequiresReplace = append(resp.RequiresReplace, p)
		}
	}
	if plan.Table != nil && (plan.Table.Name.IsUnknown() || plan.Table.Existing.IsUnknown() || plan.Table.PartitionKey.IsUnknown() || plan.Table.SortKey.IsUnknown()) {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("table"))
	}

	plan.TargetARN = types.StringUnknown()
	if a, err := stateAccount(state); err == nil && (plan.Target == nil || (!plan.Target.EventBus.IsUnknown() && !plan.Target.TopicARN.IsUnknown())) {
		plan.TargetARN = types.StringValue(spec.TargetARN(a))
	}

	if reconcilerOn {
		for _, a := range reconcilerAttributes {
			var v types.String
			resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root(a), &v)...)
			if v.IsNull() {
				resp.Diagnostics.Append(setPlanString(ctx, &plan, a, types.StringUnknown())...)
			}
		}
	}

	drift, diags := loadDrift(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	components := drift.Components()
	// The alarms' ARNs are kept while the same alarms exist unchanged.
	alarmDrift := slices.ContainsFunc(components, func(c string) bool { return strings.HasPrefix(c, "alarm_") })
	if alarmsKnown && len(wantAlarms) > 0 && !alarmDrift && !state.AlarmARNs.IsNull() && len(state.AlarmARNs.Elements()) == len(wantAlarms) {
		same := true
		for k := range state.AlarmARNs.Elements() {
			same = same && wantAlarms[k]
		}
		if same {
			plan.AlarmARNs = state.AlarmARNs
		}
	}
	if len(resp.RequiresReplace) > 0 {
		resp.Diagnostics.Append(r.warnUndeliveredOnReplace(ctx, state)...)
	}
	plan.PendingIndexARN = plannedIndexARN(state, spec, plan.PendingIndexARN)
	plannedMovedARNs(state, spec, &plan)
	for _, c := range components {
		if !reconcilerOn && contains(reconcilerComponents, c) {
			continue
		}
		for _, a := range driftAttributes[c] {
			resp.Diagnostics.Append(setPlanString(ctx, &plan, a, types.StringUnknown())...)
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

var reconcilerComponents = []string{
	pipeline.ComponentReconcilerLogGroup, pipeline.ComponentReconcilerRole, pipeline.ComponentReconcilerFunction,
	pipeline.ComponentSchedulerRole, pipeline.ComponentSchedule,
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// setPlanString sets a top-level computed string of the model by name.
func setPlanString(_ context.Context, m *PipelineResourceModel, name string, v types.String) diag.Diagnostics {
	var diags diag.Diagnostics
	switch name {
	case "table_arn":
		m.TableARN = v
	case "stream_arn":
		m.StreamARN = v
	case "pending_index_arn":
		m.PendingIndexARN = v
	case "ttl_attribute_in_use":
		m.TTLAttributeInUse = v
	case "dead_letter_queue_url":
		m.DeadLetterQueueURL = v
	case "dead_letter_queue_arn":
		m.DeadLetterQueueARN = v
	case "relay_function_name":
		m.RelayFunctionName = v
	case "relay_function_arn":
		m.RelayFunctionARN = v
	case "relay_role_arn":
		m.RelayRoleARN = v
	case "relay_log_group":
		m.RelayLogGroup = v
	case "event_source_mapping_uuid":
		m.EventSourceMappingID = v
	case "reconciler_function_arn":
		m.ReconcilerFunctionARN = v
	case "reconciler_role_arn":
		m.ReconcilerRoleARN = v
	case "reconciler_log_group":
		m.ReconcilerLogGroup = v
	case "scheduler_role_arn":
		m.SchedulerRoleARN = v
	case "schedule_arn":
		m.ScheduleARN = v
	default:
		diags.AddError("Planning the outbox pipeline", fmt.Sprintf("unknown computed attribute %q: report this as a bug of the provider", name))
	}
	return diags
}

func (r *PipelineResource) configured(diags *diag.Diagnostics) bool {
	if r.data == nil {
		diags.AddError("Unconfigured provider", "The outbox provider was not configured before the outbox_pipeline resource was used: report this as a bug of the provider.")
		return false
	}
	return true
}

func (r *PipelineResource) applyTags(ctx context.Context, m *PipelineResourceModel) (map[string]string, diag.Diagnostics) {
	tags, _, diags := mergedTags(ctx, r.defaultTags(), m.Tags)
	m.TagsAll = tagsValue(tags)
	return tags, diags
}

// Create builds the pipeline. If a step fails and its clean-up fails too,
// what remains is recorded (the resource is tainted) so that nothing is
// orphaned.
func (r *PipelineResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !r.configured(&resp.Diagnostics) {
		return
	}
	var plan PipelineResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultCreateTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tags, diags := r.applyTags(ctx, &plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := plan.Name.ValueString()
	st, err := r.clients().Create(ctx, plan.spec(tags, specOptions{}))
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Creating outbox pipeline (%s)", name), errorDetail(err))
		if !st.Exists() {
			return
		}
	}
	plan.setState(st)
	resp.Diagnostics.Append(saveState(ctx, resp.Private, st, nil)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func errorDetail(err error) string {
	if errors.Is(err, pipeline.ErrNoRelayCode) || errors.Is(err, relaypackage.ErrNotBuilt) {
		return err.Error() + "\n\nThis build of the provider does not embed the relay Lambda package. Build it with `make relay` (or `go generate ./internal/relaypackage`), then rebuild the provider with `make build`."
	}
	return err.Error()
}

// Read observes every component. Components deleted out of band are
// cleared and the drift is kept in the private state, so that the next plan
// shows an update that repairs them. A pipeline of which nothing remains is
// removed from the state.
func (r *PipelineResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if !r.configured(&resp.Diagnostics) {
		return
	}
	var state PipelineResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	st, diags := loadState(ctx, req.Private, &state)
	resp.Diagnostics.Append(diags...)
	tags := map[string]string{}
	if !state.TagsAll.IsNull() && !state.TagsAll.IsUnknown() {
		resp.Diagnostics.Append(state.TagsAll.ElementsAs(ctx, &tags, false)...)
	}
	observed, drift, err := r.clients().Read(ctx, state.spec(tags, specOptions{}), st)
	if errors.Is(err, pipeline.ErrNotFound) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Reading outbox pipeline (%s)", state.Name.ValueString()), err.Error())
		return
	}
	state.setState(observed)
	resp.Diagnostics.Append(saveState(ctx, resp.Private, observed, &drift)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update applies every change in place and repairs drift. Progress is
// recorded even when a step fails.
func (r *PipelineResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if !r.configured(&resp.Diagnostics) {
		return
	}
	var plan, state PipelineResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st, diags := loadState(ctx, req.Private, &state)
	resp.Diagnostics.Append(diags...)
	tags, diags := r.applyTags(ctx, &plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	st, err := r.clients().Update(ctx, plan.spec(tags, specOptions{}), st)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Updating outbox pipeline (%s)", plan.Name.ValueString()), errorDetail(err))
	}
	plan.setState(st)
	resp.Diagnostics.Append(saveState(ctx, resp.Private, st, nil)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete removes the pipeline; components already gone are skipped, and an
// adopted table only loses what the pipeline added to it.
func (r *PipelineResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if !r.configured(&resp.Diagnostics) {
		return
	}
	var state PipelineResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, defaultDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st, diags := loadState(ctx, req.Private, &state)
	resp.Diagnostics.Append(diags...)
	st.ForceDestroy = state.ForceDestroy.ValueBool()
	if _, err := r.clients().Delete(ctx, st); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Deleting outbox pipeline (%s)", state.Name.ValueString()), err.Error())
	}
}

// ImportState imports a pipeline by name: `terraform import outbox_pipeline.x NAME`.
func (r *PipelineResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !r.configured(&resp.Diagnostics) {
		return
	}
	name := strings.TrimSpace(req.ID)
	if name == "" {
		resp.Diagnostics.AddError("Importing outbox pipeline", "The import id is the pipeline's name, as in `terraform import outbox_pipeline.orders orders`.")
		return
	}
	spec, st, err := r.clients().Lookup(ctx, name)
	if errors.Is(err, pipeline.ErrNotFound) {
		resp.Diagnostics.AddError(fmt.Sprintf("Importing outbox pipeline (%s)", name),
			fmt.Sprintf("No outbox pipeline named %q exists in this account and region (its relay function %s was not found).", name, pipeline.NamesFor(name).RelayFunction))
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Importing outbox pipeline (%s)", name), err.Error())
		return
	}
	m := modelFromSpec(spec, st, r.defaultTags())
	m.Timeouts = timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{
		"create": types.StringType, "update": types.StringType, "delete": types.StringType,
	})}
	resp.Diagnostics.Append(saveState(ctx, resp.Private, st, nil)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// validateUnset reports explicit zeros and empty strings: the pipeline
// package reads them as "use the default", which is not what a
// configuration that spells them out means.
func (m *PipelineResourceModel) validateUnset() diag.Diagnostics {
	var diags diag.Diagnostics
	zero := func(p path.Path, v types.Int64, fix string) {
		if !v.IsNull() && !v.IsUnknown() && v.ValueInt64() == 0 {
			diags.AddAttributeError(p, "Invalid outbox pipeline configuration", fmt.Sprintf("%s is 0: %s.", dotted(p), fix))
		}
	}
	empty := func(p path.Path, v types.String) {
		if !v.IsNull() && !v.IsUnknown() && v.ValueString() == "" {
			diags.AddAttributeError(p, "Invalid outbox pipeline configuration", fmt.Sprintf("%s is empty: remove it to use the default, or set a value.", dotted(p)))
		}
	}
	retention := "use one of the values CloudWatch Logs accepts: 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288 or 3653"
	if t := m.Table; t != nil {
		p := path.Root("table")
		empty(p.AtName("name"), t.Name)
		empty(p.AtName("partition_key"), t.PartitionKey)
		empty(p.AtName("sort_key"), t.SortKey)
		empty(p.AtName("sort_key_prefix"), t.SortKeyPrefix)
		empty(p.AtName("ttl_attribute"), t.TTLAttribute)
	}
	if t := m.Target; t != nil {
		empty(path.Root("target").AtName("event_bus"), t.EventBus)
		empty(path.Root("target").AtName("topic_arn"), t.TopicARN)
	}
	if r := m.Relay; r != nil {
		p := path.Root("relay")
		zero(p.AtName("batch_size"), r.BatchSize, "use 1 to 10000")
		zero(p.AtName("parallelization_factor"), r.ParallelizationFactor, "use 1 to 10")
		zero(p.AtName("memory_size"), r.MemorySize, "use 128 to 10240 MB")
		zero(p.AtName("timeout"), r.Timeout, "use 1 to 900 seconds")
		zero(p.AtName("log_retention_days"), r.LogRetentionDays, retention)
		empty(p.AtName("architecture"), r.Architecture)
	}
	if pub := m.Published; pub != nil {
		empty(path.Root("published").AtName("action"), pub.Action)
	}
	if pi := m.PendingIndex; pi != nil {
		empty(path.Root("pending_index").AtName("name"), pi.Name)
		zero(path.Root("pending_index").AtName("shards"), pi.Shards, "use a value from 1 to 256")
	}
	if r := m.Reconciler; r != nil {
		p := path.Root("reconciler")
		empty(p.AtName("schedule_expression"), r.ScheduleExpression)
		zero(p.AtName("min_age_seconds"), r.MinAgeSeconds, "use at least 1 second, typically longer than the stream's delivery delay, such as 300")
		zero(p.AtName("memory_size"), r.MemorySize, "use 128 to 10240 MB")
		zero(p.AtName("timeout"), r.Timeout, "use 1 to 900 seconds")
		zero(p.AtName("log_retention_days"), r.LogRetentionDays, retention)
	}
	if d := m.DeadLetter; d != nil {
		zero(path.Root("dead_letter").AtName("message_retention_seconds"), d.MessageRetentionSeconds, "use 60 to 1209600 seconds (14 days)")
		empty(path.Root("dead_letter").AtName("kms_master_key_id"), d.KMSMasterKeyID)
	}
	if a := m.Alarms; a != nil {
		p := path.Root("alarms")
		empty(p.AtName("sns_topic_arn"), a.SNSTopicARN)
		empty(p.AtName("treat_missing_data"), a.TreatMissingData)
		zero(p.AtName("relay_errors_threshold"), a.RelayErrorsThreshold, "use 1 or more errors per minute")
		zero(p.AtName("iterator_age_threshold_seconds"), a.IteratorAgeThresholdSeconds, "use 1 to 86400 seconds")
		zero(p.AtName("oldest_pending_age_threshold_seconds"), a.OldestPendingAgeThresholdSeconds, "use more than reconciler.min_age_seconds, such as 900")
		zero(p.AtName("evaluation_periods"), a.EvaluationPeriods, "use 1 or more periods")
	}
	return diags
}

// dotted writes an attribute path as in configurations: relay.batch_size.
func dotted(p path.Path) string { return strings.ReplaceAll(p.String(), "\"", "") }

// warnUndeliveredOnReplace warns, on a plan that replaces the pipeline,
// when its dedicated table holds events not yet delivered: the replacement
// deletes that table, so apply will refuse unless force_destroy is set.
func (r *PipelineResource) warnUndeliveredOnReplace(ctx context.Context, state PipelineResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	if r.data == nil || (state.Table != nil && state.Table.Existing.ValueBool()) || str(state.TableName) == "" {
		return diags
	}
	u, err := r.clients().CountUndelivered(ctx, str(state.TableName), nil)
	if err != nil || u.Total() == 0 {
		return diags
	}
	outcome := "Apply will fail before deleting anything, because force_destroy is false."
	if state.ForceDestroy.ValueBool() {
		outcome = "force_destroy is true: apply will delete the table and these events with it."
	}
	name := str(state.Name)
	diags.AddWarning("Replacing the outbox pipeline deletes undelivered events",
		fmt.Sprintf("The planned change replaces the pipeline %s, which deletes its table %s. The table holds %s events. %s "+
			"Deliver them first: `outbox drain %s` waits until none is pending, and `outbox requeue %s` sends FAILED events again once their cause is fixed.",
			name, str(state.TableName), u, outcome, name, name))
	return diags
}

// plannedIndexARN is the pending index's ARN after a rename or a switch of
// the index, both made in place: unknown, or null without the index.
func plannedIndexARN(state PipelineResourceModel, spec pipeline.Spec, planned types.String) types.String {
	if spec.Table.PendingIndexDisabled {
		return types.StringNull()
	}
	if arn := str(state.PendingIndexARN); arn == "" || !strings.HasSuffix(arn, "/index/"+spec.Table.PendingIndexName) {
		return types.StringUnknown()
	}
	return planned
}

// stateAccount is the pipeline's account and region, from the first ARN in
// the state that has both: a component deleted out of band (the table)
// leaves the others.
func stateAccount(state PipelineResourceModel) (pipeline.Account, error) {
	var err error
	for _, arn := range []types.String{state.TableARN, state.RelayFunctionARN, state.DeadLetterQueueARN, state.StreamARN} {
		var a pipeline.Account
		if a, err = pipeline.AccountOf(str(arn)); err == nil && a.Region != "" && a.ID != "" {
			return a, nil
		}
	}
	return pipeline.Account{}, fmt.Errorf("no ARN with an account in the state: %w", err)
}

// plannedMovedARNs plans unknown the ARNs that a change made in place
// alters: the roles' under a new IAM path, the schedule's in a new group.
func plannedMovedARNs(state PipelineResourceModel, spec pipeline.Spec, plan *PipelineResourceModel) {
	if arn := str(state.RelayRoleARN); arn != "" && !strings.Contains(arn, ":role"+spec.IAM.Path+pipeline.NamesFor(spec.Name).RelayRole) {
		plan.RelayRoleARN = types.StringUnknown()
		if !plan.ReconcilerRoleARN.IsNull() {
			plan.ReconcilerRoleARN, plan.SchedulerRoleARN = types.StringUnknown(), types.StringUnknown()
		}
	}
	if arn := str(state.ScheduleARN); arn != "" && !plan.ScheduleARN.IsNull() && !strings.Contains(arn, ":schedule/"+spec.Reconciler.ScheduleGroup+"/") {
		plan.ScheduleARN = types.StringUnknown()
	}
}
