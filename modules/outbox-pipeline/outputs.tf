################################################################################
# Pipeline
################################################################################

output "pipeline_name" {
  description = "Name of the pipeline (its import id)."
  value       = outbox_pipeline.this.id
}

output "table_name" {
  description = "Name of the outbox table, where the application writes its outbox items."
  value       = outbox_pipeline.this.table_name
}

output "table_arn" {
  description = "ARN of the outbox table."
  value       = outbox_pipeline.this.table_arn
}

output "stream_arn" {
  description = "ARN of the table's stream that the relay reads."
  value       = outbox_pipeline.this.stream_arn
}

output "pending_index_arn" {
  description = "ARN of the sparse pending index."
  value       = outbox_pipeline.this.pending_index_arn
}

output "writer_table" {
  description = "What an outbox writer needs to know about the table (the fields of the Go `outbox.Table`): name, key attributes, sort key prefix, TTL attribute, pending index name and shards. It reads the pipeline's computed `writer`, so it holds after an import too."
  value = {
    name            = outbox_pipeline.this.writer.table_name
    partition_key   = outbox_pipeline.this.writer.partition_key
    sort_key        = outbox_pipeline.this.writer.sort_key
    sort_key_prefix = outbox_pipeline.this.writer.sort_key_prefix
    ttl_attribute   = outbox_pipeline.this.writer.ttl_attribute
    pending_index   = outbox_pipeline.this.writer.pending_index_name
    pending_shards  = outbox_pipeline.this.writer.pending_index_shards
  }
}

output "target_arn" {
  description = "ARN of the event bus, SNS topic or SQS queue the pipeline publishes to."
  value       = outbox_pipeline.this.target_arn
}

output "event_bus_arn" {
  description = "ARN of the event bus the pipeline publishes to; null when it publishes to an SNS topic or an SQS queue."
  value       = var.topic_arn == null && var.queue_arn == null ? outbox_pipeline.this.target_arn : null
}

output "relay_function_name" {
  description = "Name of the relay function."
  value       = outbox_pipeline.this.relay_function_name
}

output "relay_function_arn" {
  description = "ARN of the relay function."
  value       = outbox_pipeline.this.relay_function_arn
}

output "relay_log_group" {
  description = "Log group of the relay function."
  value       = outbox_pipeline.this.relay_log_group
}

output "event_source_mapping_uuid" {
  description = "UUID of the relay's event source mapping on the stream."
  value       = outbox_pipeline.this.event_source_mapping_uuid
}

output "dead_letter_queue_url" {
  description = "URL of the relay's dead-letter queue."
  value       = outbox_pipeline.this.dead_letter_queue_url
}

output "dead_letter_queue_arn" {
  description = "ARN of the relay's dead-letter queue."
  value       = outbox_pipeline.this.dead_letter_queue_arn
}

output "reconciler_function_arn" {
  description = "ARN of the reconciler function; null when the reconciler is disabled."
  value       = outbox_pipeline.this.reconciler_function_arn
}

output "schedule_arn" {
  description = "ARN of the reconciler's schedule; null when the reconciler is disabled."
  value       = outbox_pipeline.this.schedule_arn
}

output "alarm_arns" {
  description = "ARNs of the pipeline's CloudWatch alarms by key (`dlq_not_empty`, `relay_errors`, `iterator_age`, `events_failed`, `environment_errors` with the reconciler `oldest_pending_age`, `stuck`, `reconciler_events_failed`, `reconciler_environment_errors`, and with `multi_region` `ordering_conflicts` (ordered mode) and `takeover_unavailable` (with the reconciler)); empty with `alarms = null`."
  value       = outbox_pipeline.this.alarm_arns != null ? outbox_pipeline.this.alarm_arns : {}
}

output "claim_check" {
  description = "What the application's writer and the consumers' roles need of the claim-check bucket: `bucket_name` and `kms_key_arn` (null for SSE-S3), for `outbox.WithClaimCheck` and `outbox.WithClaimKMSKey`; `bucket_arn`; `writer_policy_json`, the IAM policy of the role that writes claim-checked events (`s3:PutObject` on `outbox/*`, and the key's grants with `kms_key_arn`); `consumer_policy_json`, that of a consumer's role that fetches their data (`s3:GetObject` on `outbox/*`, and `kms:Decrypt` with `kms_key_arn`). Every attribute is null without a bucket (`claim_check` null, or `enabled = false`)."
  value = {
    bucket_name          = outbox_pipeline.this.writer.claim_bucket
    bucket_arn           = try(outbox_pipeline.this.claim_check.bucket_arn, null)
    kms_key_arn          = outbox_pipeline.this.writer.claim_kms_key_arn
    writer_policy_json   = try(outbox_pipeline.this.claim_check.writer_policy_json, null)
    consumer_policy_json = try(outbox_pipeline.this.claim_check.consumer_policy_json, null)
  }
}

################################################################################
# Subscriptions
################################################################################

output "subscriptions" {
  description = "Every subscription by key: its name, its rule ARN (null on a topic) or its SNS subscription's ARN `subscription_arn` (null on a bus), its queue URL and ARN, its dead-letter queue URL and ARN (ending in `.fifo` on a FIFO topic), and, with an `inbox`, the inbox table's name and ARN and the consumer's IAM policy `consumer_policy_json` (all null without one)."
  value = { for k, s in outbox_subscription.this : k => {
    name                  = s.name
    rule_arn              = s.rule_arn
    subscription_arn      = s.subscription_arn
    queue_url             = s.queue_url
    queue_arn             = s.queue_arn
    dead_letter_queue_url = s.dead_letter_queue_url
    dead_letter_queue_arn = s.dead_letter_queue_arn
    inbox_table_name      = try(s.inbox.table_name, null)
    inbox_table_arn       = try(s.inbox.table_arn, null)
    consumer_policy_json  = try(s.inbox.consumer_policy_json, null)
  } }
}

output "subscription_inbox_table_names" {
  description = "Name of the inbox table of each subscription that has an `inbox`, by key: the table of the consumer kit's `consumer.NewInbox`."
  value       = { for k, s in outbox_subscription.this : k => s.inbox.table_name if s.inbox != null }
}

output "subscription_consumer_policies" {
  description = "The least-privilege IAM policy document (JSON) of the consumer of each subscription that has an `inbox`, by key: receiving its queue and applying events with the kit's inbox. Attach it to the consumer's role."
  value       = { for k, s in outbox_subscription.this : k => s.inbox.consumer_policy_json if s.inbox != null }
}

output "subscription_queue_urls" {
  description = "URL of each subscription's queue, by key."
  value       = { for k, s in outbox_subscription.this : k => s.queue_url }
}

output "subscription_queue_arns" {
  description = "ARN of each subscription's queue, by key."
  value       = { for k, s in outbox_subscription.this : k => s.queue_arn }
}

output "subscription_rule_arns" {
  description = "ARN of each subscription's EventBridge rule, by key; empty when the pipeline publishes to an SNS topic (see `subscription_topic_subscription_arns`)."
  value       = local.subscribes_to_topic ? {} : { for k, s in outbox_subscription.this : k => s.rule_arn }
}

output "subscription_topic_subscription_arns" {
  description = "ARN of each subscription's SNS subscription to the pipeline's topic, by key; empty when the pipeline publishes to an event bus (see `subscription_rule_arns`)."
  value       = local.subscribes_to_topic ? { for k, s in outbox_subscription.this : k => s.subscription_arn } : {}
}
