package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
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

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
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

func (r *PipelineResource) clients() *provision.Pipeline {
	return provision.New(r.data.AWS, r.relayCode())
}

// relayCode is the relay package embedded in the provider.
func (r *PipelineResource) relayCode() provision.RelayCode {
	return provision.RelayCode{Zip: relaypackage.Zip, SHA256: relaypackage.SHA256}
}

func (r *PipelineResource) defaultTags() map[string]string {
	if r.data == nil {
		return nil
	}
	return r.data.DefaultTags
}

// optIntAttr is an optional whole number with a default, which its
// description states, checked at plan time by the validators.
func optIntAttr(desc string, def int64, v ...validator.Int64) schema.Int64Attribute {
	return schema.Int64Attribute{
		Optional: true, Computed: true, Default: int64default.StaticInt64(def), CustomType: wholeNumberType{},
		MarkdownDescription: withDefault(desc, fmt.Sprint(def)), Validators: v,
	}
}

// optStringAttr is an optional string with a default, which its
// description states, checked at plan time by the validators.
func optStringAttr(desc, def string, v ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{
		Optional: true, Computed: true, Default: stringdefault.StaticString(def),
		MarkdownDescription: withDefault(desc, fmt.Sprintf("%q", def)), Validators: v,
	}
}

// optBoolAttr is an optional bool with a default, which its description
// states.
func optBoolAttr(desc string, def bool) schema.BoolAttribute {
	return schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(def), MarkdownDescription: withDefault(desc, fmt.Sprint(def))}
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
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: fmt.Sprintf("Name of the pipeline, the prefix of every component it creates (`<name>-outbox` table, `<name>-relay` function, `<name>-relay-dlq` queue, `<name>-reconciler`...). "+
					"1 to %d letters, digits, hyphens and underscores. Changing it replaces the pipeline.", provision.MaxNameLength),
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"tags": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Tags of every component that takes tags (not of an adopted table). Merged with the provider's `default_tags`; these win on conflicts.",
			},
			"force_destroy": optBoolAttr("Let destroy (or a replacement) delete a dedicated table that still holds `PENDING` or `FAILED` events, which are then lost, as `aws_s3_bucket`'s `force_destroy`. "+
				"Without it, destroy fails with the counts: deliver the events first (`outbox drain <name>`, `outbox requeue <name>`). Apply it before the destroy: destroy reads the value in the state.", false),
			"tags_all": schema.MapAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The tags applied: the provider's `default_tags` merged with `tags`.",
			},
			"writer": writerResourceAttribute(),
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
					"existing": optBoolAttr("Adopt the existing table `name` instead of creating a dedicated one. Outbox items then sit beside the application's items, under their aggregate's partition key. Changing it replaces the pipeline.", false),
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
					"deletion_protection": optBoolAttr("Deletion protection of a dedicated table, as `aws_dynamodb_table`'s `deletion_protection_enabled`. Destroying the pipeline turns it off only once the table holds no `PENDING` or `FAILED` event, or under `force_destroy`. Ignored for an adopted table.", true),
					"kms_key_arn": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "ARN of a customer managed KMS key that encrypts a dedicated table (`server_side_encryption` of `aws_dynamodb_table`); unset uses the AWS owned key. Changed in place. Not allowed on an adopted table.",
					},
					"point_in_time_recovery": optBoolAttr("Point-in-time recovery (continuous backups) of a dedicated table. Ignored for an adopted table.", true),
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
						MarkdownDescription: "ARN of a standard (not FIFO) SNS topic. The message body is an EventBridge-style envelope. Conflicts with `event_bus`. Unset, the pipeline publishes to `event_bus`.",
					},
				},
			},
			"relay": schema.SingleNestedBlock{
				MarkdownDescription: "The relay function and its event source mapping on the table's stream.",
				Attributes: map[string]schema.Attribute{
					"batch_size":                 optIntAttr("Largest batch of stream records per invocation, 1 to 10000.", provision.DefaultBatchSize, int64validator.Between(1, 10000)),
					"batching_window_seconds":    optIntAttr("How long the mapping gathers records before invoking, 0 to 300 seconds.", 0, int64validator.Between(0, 300)),
					"parallelization_factor":     optIntAttr("Concurrent batches per shard, 1 to 10. Events of one item stay ordered.", provision.DefaultParallelizationFactor, int64validator.Between(1, 10)),
					"maximum_retry_attempts":     optIntAttr("Retries of a failed batch before its metadata goes to the dead-letter queue, -1 (until the record expires) to 10000. The items stay pending and the reconciler republishes them.", provision.DefaultMaximumRetryAttempts, int64validator.Between(-1, 10000)),
					"maximum_record_age_seconds": optIntAttr("Age after which a record is no longer retried: -1 (no limit) or 60 to 604800 seconds.", provision.DefaultMaximumRecordAgeSeconds, int64validator.Any(int64validator.OneOf(-1), int64validator.Between(60, 604800))),
					"bisect_on_error":            optBoolAttr("Split a failed batch in two and retry each half.", provision.DefaultBisectBatchOnError),
					"memory_size":                optIntAttr("Memory of the relay function, 128 to 10240 MB.", provision.DefaultRelayMemory, int64validator.Between(128, 10240)),
					"timeout":                    optIntAttr("Timeout of the relay function, 1 to 900 seconds.", provision.DefaultRelayTimeout, int64validator.Between(1, 900)),
					"architecture":               optStringAttr("Instruction set of both functions: `arm64` or `x86_64`.", string(provision.DefaultArchitecture), stringvalidator.OneOf(string(provision.ArchARM64), string(provision.ArchX86_64))),
					"log_retention_days": optIntAttr("Retention of the relay's log group, one of the values CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...).",
						provision.DefaultLogRetentionDays, int64validator.OneOf(logRetentionDays()...)),
					"reserved_concurrency": schema.Int64Attribute{
						Optional: true, CustomType: wholeNumberType{},
						Validators:          []validator.Int64{int64validator.AtLeast(1)},
						MarkdownDescription: "Reserved concurrency of the relay function; unset leaves it unreserved.",
					},
					"tracing_mode": optStringAttr("X-Ray tracing of both functions, as `aws_lambda_function`'s `tracing_config.mode`: `PassThrough` or `Active`. Active adds `xray:PutTraceSegments` and `xray:PutTelemetryRecords` to the roles.", provision.DefaultTracingMode,
						stringvalidator.OneOf(provision.TracingModes...)),
					"kms_key_arn": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "ARN of a customer managed KMS key that encrypts both functions' environment variables; unset uses Lambda's key. The roles get `kms:Decrypt` on it.",
					},
				},
				Blocks: map[string]schema.Block{
					"logging": schema.SingleNestedBlock{
						MarkdownDescription: "Logging of both functions, as `aws_lambda_function`'s `logging_config`. The log levels need `log_format = \"JSON\"`.",
						Attributes: map[string]schema.Attribute{
							"log_format": optStringAttr("`Text` or `JSON`.", provision.DefaultLogFormat, stringvalidator.OneOf(provision.LogFormats...)),
							"application_log_level": schema.StringAttribute{
								Optional: true, Validators: []validator.String{stringvalidator.OneOf(provision.ApplicationLogLevels...)},
								MarkdownDescription: "Lowest level of the functions' own logs that Lambda keeps: `TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR` or `FATAL`. With `JSON`, unset means `INFO`.",
							},
							"system_log_level": schema.StringAttribute{
								Optional: true, Validators: []validator.String{stringvalidator.OneOf(provision.SystemLogLevels...)},
								MarkdownDescription: "Lowest level of Lambda's platform logs that it keeps: `DEBUG`, `INFO` or `WARN`. With `JSON`, unset means `INFO`.",
							},
						},
					},
					"vpc_config": schema.SingleNestedBlock{
						MarkdownDescription: "Attaches both functions to a VPC, as `aws_lambda_function`'s `vpc_config`. The roles get the EC2 network interface permissions of `AWSLambdaVPCAccessExecutionRole`. " +
							"The subnets need a route to DynamoDB, SQS and the target (VPC endpoints or a NAT gateway). Removing the block detaches them.",
						Attributes: map[string]schema.Attribute{
							"subnet_ids": schema.SetAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Subnet ids (up to 16).",
								Validators: []validator.Set{setvalidator.SizeAtMost(16)}},
							"security_group_ids": schema.SetAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Security group ids (up to 5).",
								Validators: []validator.Set{setvalidator.SizeAtMost(5)}},
						},
					},
				},
			},
			"published": schema.SingleNestedBlock{
				MarkdownDescription: "What the relay does with an item once its event is published.",
				Attributes: map[string]schema.Attribute{
					"action": optStringAttr("`mark` (status `PUBLISHED`, removed from the pending index, expiring after `ttl_days`) or `delete`.", string(config.ActionMark), stringvalidator.OneOf(string(config.ActionMark), string(config.ActionDelete))),
					"ttl_days": optIntAttr("Days a marked item is kept before DynamoDB TTL deletes it; 0 keeps it forever. Ignored with `delete`.",
						defaultPublishedTTLDays, int64validator.AtLeast(0)),
				},
			},
			"pending_index": schema.SingleNestedBlock{
				MarkdownDescription: "The sparse, sharded global secondary index of pending items that the reconciler queries.",
				Attributes: map[string]schema.Attribute{
					"name": optStringAttr("Name of the index. On a dedicated table a new name is built in place: the new index is created (DynamoDB backfills it with the pending items), "+
						"the functions switch to it, then the old one is dropped. On an adopted table changing it replaces the pipeline.", outbox.DefaultPendingIndexName),
					"shards": optIntAttr("Number of index partitions (`PENDING#0..n-1`), 1 to 256; each takes up to 1,000 writes a second. "+
						"Lowering it strands nothing: the reconciler keeps querying the higher shards until they are empty (checked on each apply).", outbox.DefaultPendingShards,
						int64validator.Between(1, outbox.MaxPendingShards)),
					"enabled": optBoolAttr("Keep the pending index. `false` is allowed only with a dedicated table and `published.action = \"delete\"`: the table then holds only pending and failed items, "+
						"and the reconciler finds old pending items with a parallel `Scan` instead (one write unit less per event). Switching it is an update in place: the index is built (DynamoDB backfills it) or dropped after the functions switch.", true),
				},
			},
			"reconciler": schema.SingleNestedBlock{
				MarkdownDescription: "The reconciler: a function run on a schedule that republishes pending items older than `min_age_seconds` (missed by the stream, or dead-lettered).",
				Attributes: map[string]schema.Attribute{
					"enabled":             optBoolAttr("Create the reconciler. Disabling it removes the function, its schedule and roles.", true),
					"schedule_expression": optStringAttr("EventBridge Scheduler expression, `rate(...)` or `cron(...)`.", provision.DefaultScheduleExpression, scheduleExpressionValidator{}),
					"schedule_timezone":   optStringAttr("IANA time zone of a `cron(...)` schedule, as `aws_scheduler_schedule`'s `schedule_expression_timezone`.", provision.DefaultScheduleTimezone),
					"flexible_time_window_minutes": optIntAttr("Minutes by which Scheduler may delay a run (its flexible time window, 1 to 1440); 0 runs exactly on schedule.", 0,
						int64validator.Between(0, 1440)),
					"schedule_group":     optStringAttr("Existing EventBridge Scheduler group of the schedule (`aws_scheduler_schedule_group`). Changing it moves the schedule (it is recreated in the new group).", provision.ScheduleGroup),
					"min_age_seconds":    optIntAttr("Age in seconds a pending item must reach before the reconciler republishes it; longer than the stream's usual delivery delay.", defaultMinAgeSeconds, int64validator.AtLeast(1)),
					"memory_size":        optIntAttr("Memory of the reconciler function, 128 to 10240 MB.", provision.DefaultReconcilerMemory, int64validator.Between(128, 10240)),
					"timeout":            optIntAttr("Timeout of the reconciler function, 1 to 900 seconds.", provision.DefaultReconcilerTimeout, int64validator.Between(1, 900)),
					"log_retention_days": optIntAttr("Retention of the reconciler's log group.", provision.DefaultLogRetentionDays, int64validator.OneOf(logRetentionDays()...)),
				},
			},
			"dead_letter": schema.SingleNestedBlock{
				MarkdownDescription: "The SQS queue that receives the metadata of batches whose retries ran out. The items themselves stay pending.",
				Attributes: map[string]schema.Attribute{
					"message_retention_seconds": optIntAttr("Retention of the queue, 60 to 1209600 seconds.", provision.DefaultQueueRetentionSeconds, int64validator.Between(60, 1209600)),
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
					"enabled": optBoolAttr("Create the alarms; `false` deletes them and keeps the settings.", true),
					"sns_topic_arn": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "SNS topic notified when an alarm goes to `ALARM` and back to `OK`. Unset, the alarms notify nothing.",
					},
					"relay_errors_threshold": optIntAttr("Relay function errors per minute, for `evaluation_periods` minutes, that raise `relay_errors`; 1 or more.",
						provision.DefaultRelayErrorsThreshold, int64validator.AtLeast(1)),
					"iterator_age_threshold_seconds": optIntAttr("Age in seconds of the last stream record the relay read above which `iterator_age` raises, 1 to 86400 (a stream keeps records 24 hours).",
						provision.DefaultIteratorAgeThresholdSeconds, int64validator.Between(1, 86400)),
					"oldest_pending_age_threshold_seconds": optIntAttr("Age in seconds of the oldest pending event, as the reconciler reports it, above which `oldest_pending_age` raises. "+
						"More than `reconciler.min_age_seconds`: the reconciler reports only events older than that, and republishes them.",
						provision.DefaultOldestPendingAgeThresholdSeconds, int64validator.AtLeast(1)),
					"evaluation_periods": optIntAttr("Consecutive periods over the threshold that raise `relay_errors`, `iterator_age` and `oldest_pending_age`; "+
						"a period times this number is at most one day. `dlq_not_empty` raises on the first message.", provision.DefaultAlarmEvaluationPeriods, int64validator.AtLeast(1)),
					"treat_missing_data": optStringAttr("How `relay_errors`, `iterator_age` and `oldest_pending_age` treat periods without data: `notBreaching`, `breaching`, `ignore` or `missing`. "+
						"`dlq_not_empty` always treats them as not breaching, since SQS stops sending the metrics of an inactive queue.", provision.DefaultTreatMissingData, stringvalidator.OneOf("breaching", "notBreaching", "ignore", "missing")),
				},
			},
			"iam": schema.SingleNestedBlock{
				MarkdownDescription: "Settings of every role the pipeline creates (relay, reconciler and scheduler roles).",
				Attributes: map[string]schema.Attribute{
					"permissions_boundary": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "ARN of a managed policy set as the permissions boundary of every role, as `aws_iam_role`'s `permissions_boundary`. It must allow what the roles' policies grant, or the functions fail. Unset, the roles have none. Changed in place.",
					},
					"path": optStringAttr("Path of every role, as `aws_iam_role`'s `path`. IAM cannot move a role: changing it recreates the roles in place of the old ones, and the functions and the schedule switch to them.", "/"),
				},
			},
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
	maps.Copy(resp.Schema.Attributes, computedStringAttributes())
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
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	for _, err := range joined(m.spec(tags, specOptions{validating: true}).Validate()) {
		var ve *provision.ValidationError
		if !errors.As(err, &ve) {
			resp.Diagnostics.AddError("Invalid outbox pipeline configuration", err.Error())
			continue
		}
		p, ok := attributePath(ve.Field)
		if !ok {
			p = path.Root("name")
		}
		if len(ve.Related) == 0 && validatorsReject(ctx, sr.Schema, req.Config, p) {
			continue // the attribute's validators report it, with the others
		}
		if anyUnknown(ctx, req.Config, append([]string{ve.Field}, ve.Related...)) {
			// A check against a value known only at apply (read as its
			// default here) waits for apply, where the pipeline
			// validates again.
			continue
		}
		resp.Diagnostics.AddAttributeError(p, "Invalid outbox pipeline configuration",
			fmt.Sprintf("%s %s: %s.", dotted(p), attributeNames(ve.Problem), attributeNames(ve.Fix)))
	}
}

// joined returns the errors that errors.Join joined, or err alone.
func joined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// validatorsReject reports whether the validators of the attribute at p
// reject its configured value: they report the problem themselves.
func validatorsReject(ctx context.Context, s schema.Schema, config tfsdk.Config, p path.Path) bool {
	a, diags := s.AttributeAtPath(ctx, p)
	if diags.HasError() {
		return false
	}
	switch a := a.(type) {
	case schema.Int64Attribute:
		var v types.Int64
		if config.GetAttribute(ctx, p, &v).HasError() {
			return false
		}
		for _, val := range a.Validators {
			var resp validator.Int64Response
			val.ValidateInt64(ctx, validator.Int64Request{Path: p, PathExpression: p.Expression(), ConfigValue: v, Config: config}, &resp)
			if resp.Diagnostics.HasError() {
				return true
			}
		}
	case schema.StringAttribute:
		var v types.String
		if config.GetAttribute(ctx, p, &v).HasError() {
			return false
		}
		for _, val := range a.Validators {
			var resp validator.StringResponse
			val.ValidateString(ctx, validator.StringRequest{Path: p, PathExpression: p.Expression(), ConfigValue: v, Config: config}, &resp)
			if resp.Diagnostics.HasError() {
				return true
			}
		}
	}
	return false
}

// anyUnknown reports whether the value of one of the Spec's fields is
// unknown in the configuration.
func anyUnknown(ctx context.Context, config tfsdk.Config, fields []string) bool {
	for _, f := range fields {
		if p, ok := attributePath(f); ok && configUnknown(ctx, config, p) {
			return true
		}
	}
	return false
}

// configUnknown reports whether the configuration's value at p is unknown.
func configUnknown(ctx context.Context, config tfsdk.Config, p path.Path) bool {
	var v attr.Value
	if diags := config.GetAttribute(ctx, p, &v); diags.HasError() || v == nil {
		return false
	}
	return v.IsUnknown()
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
	ctx, cancel := context.WithTimeout(withWaitLog(ctx), timeout)
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

// errorDetail is the detail of an error of the pipeline package, with the
// fields of provision.Spec it names written as attribute paths.
func errorDetail(err error) string {
	if errors.Is(err, provision.ErrNoRelayCode) || errors.Is(err, relaypackage.ErrNotBuilt) {
		return attributeNames(err.Error()) + "\n\nThis build of the provider does not embed the relay Lambda package. Build it with `make relay` (or `go generate ./internal/relaypackage`), then rebuild the provider with `make build`."
	}
	return attributeNames(err.Error())
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
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	tags := map[string]string{}
	if !state.TagsAll.IsNull() && !state.TagsAll.IsUnknown() {
		resp.Diagnostics.Append(state.TagsAll.ElementsAs(ctx, &tags, false)...)
	}
	observed, drift, err := r.clients().Read(ctx, state.spec(tags, specOptions{}), st)
	if errors.Is(err, provision.ErrNotFound) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Reading outbox pipeline (%s)", state.Name.ValueString()), err.Error())
		return
	}
	state.setState(observed)
	if changed := changedComponents(drift); len(changed) > 0 {
		// Show what was changed out of band: the plan restores it.
		if spec, _, err := r.clients().Lookup(ctx, state.Name.ValueString()); err == nil {
			state.showObserved(spec, changed)
		}
	}
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
	ctx, cancel := context.WithTimeout(withWaitLog(ctx), timeout)
	defer cancel()
	st, diags := loadState(ctx, req.Private, &state)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
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
	ctx, cancel := context.WithTimeout(withWaitLog(ctx), timeout)
	defer cancel()
	st, diags := loadState(ctx, req.Private, &state)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
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
	if errors.Is(err, provision.ErrNotFound) {
		resp.Diagnostics.AddError(fmt.Sprintf("Importing outbox pipeline (%s)", name),
			fmt.Sprintf("No outbox pipeline named %q exists in this account and region (its relay function %s was not found).", name, provision.NamesFor(name).RelayFunction))
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

// validateUnset reports the empty strings of blocks: the pipeline package
// reads them as "use the default", which is not what a configuration that
// spells them out means. (Explicit zeros are refused by the attributes'
// validators.)
func (m *PipelineResourceModel) validateUnset() diag.Diagnostics {
	var diags diag.Diagnostics
	walkModelValues(reflect.ValueOf(m).Elem(), path.Empty(), func(p path.Path, _ reflect.StructField, v reflect.Value) {
		s, ok := v.Interface().(types.String)
		if ok && len(p.Steps()) > 1 && !s.IsNull() && !s.IsUnknown() && s.ValueString() == "" {
			diags.AddAttributeError(p, "Invalid outbox pipeline configuration", fmt.Sprintf("%s is empty: remove it to use the default, or set a value.", dotted(p)))
		}
	})
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
// the index, both made in place: null without the index; the planned value
// when it names the index (predicted from the name, or kept); else unknown.
func plannedIndexARN(spec provision.Spec, planned types.String) types.String {
	if spec.Table.PendingIndexDisabled {
		return types.StringNull()
	}
	if planned.IsUnknown() || strings.HasSuffix(str(planned), "/index/"+spec.Table.PendingIndexName) {
		return planned
	}
	return types.StringUnknown()
}

// stateAccount is the pipeline's account and region, from the first ARN in
// the state that has both: a component deleted out of band (the table)
// leaves the others.
func stateAccount(state PipelineResourceModel) (provision.Account, error) {
	var err error
	for _, arn := range []types.String{state.TableARN, state.RelayFunctionARN, state.DeadLetterQueueARN, state.StreamARN} {
		var a provision.Account
		if a, err = provision.AccountOf(str(arn)); err == nil && a.Region != "" && a.ID != "" {
			return a, nil
		}
	}
	return provision.Account{}, fmt.Errorf("no ARN with an account in the state: %w", err)
}

// plannedMovedARNs plans unknown the ARNs that a change made in place
// alters: the roles' under a new IAM path, the schedule's in a new group.
func plannedMovedARNs(state PipelineResourceModel, spec provision.Spec, plan *PipelineResourceModel) {
	if arn := str(state.RelayRoleARN); arn != "" && !strings.Contains(arn, ":role"+spec.IAM.Path+provision.NamesFor(spec.Name).RelayRole) {
		plan.RelayRoleARN = types.StringUnknown()
		if !plan.ReconcilerRoleARN.IsNull() {
			plan.ReconcilerRoleARN, plan.SchedulerRoleARN = types.StringUnknown(), types.StringUnknown()
		}
	}
	if arn := str(state.ScheduleARN); arn != "" && !plan.ScheduleARN.IsNull() && !strings.Contains(arn, ":schedule/"+spec.Reconciler.ScheduleGroup+"/") {
		plan.ScheduleARN = types.StringUnknown()
	}
}

// pipelineSchemaVersion is the version of the resource's schema; see
// UpgradeState for the upgrades of older states.
const pipelineSchemaVersion = 1
