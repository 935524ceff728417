locals {
  # The pipeline publishes to an EventBridge bus unless a topic is given.
  target = var.event_bus != null || var.topic_arn != null ? [{
    event_bus = var.event_bus
    topic_arn = var.topic_arn
  }] : []
}

resource "outbox_pipeline" "this" {
  name          = var.name
  tags          = var.tags
  force_destroy = var.force_destroy

  table {
    existing        = var.table.existing
    name            = var.table.name
    partition_key   = var.table.partition_key
    sort_key        = var.table.sort_key
    sort_key_prefix = var.table.sort_key_prefix
    ttl_attribute   = var.table.ttl_attribute
  }

  dynamic "target" {
    for_each = local.target
    content {
      event_bus = target.value.event_bus
      topic_arn = target.value.topic_arn
    }
  }

  relay {
    batch_size                 = var.relay.batch_size
    batching_window_seconds    = var.relay.batching_window_seconds
    parallelization_factor     = var.relay.parallelization_factor
    maximum_retry_attempts     = var.relay.maximum_retry_attempts
    maximum_record_age_seconds = var.relay.maximum_record_age_seconds
    bisect_on_error            = var.relay.bisect_on_error
    memory_size                = var.relay.memory_size
    timeout                    = var.relay.timeout
    architecture               = var.relay.architecture
    log_retention_days         = var.relay.log_retention_days
    reserved_concurrency       = var.relay.reserved_concurrency
  }

  published {
    action   = var.published.action
    ttl_days = var.published.ttl_days
  }

  pending_index {
    name   = var.pending_index.name
    shards = var.pending_index.shards
  }

  reconciler {
    enabled             = var.reconciler.enabled
    schedule_expression = var.reconciler.schedule_expression
    min_age_seconds     = var.reconciler.min_age_seconds
    memory_size         = var.reconciler.memory_size
    timeout             = var.reconciler.timeout
    log_retention_days  = var.reconciler.log_retention_days
  }

  dead_letter {
    message_retention_seconds = var.dead_letter.message_retention_seconds
    kms_master_key_id         = var.dead_letter.kms_master_key_id
  }

  dynamic "alarms" {
    for_each = var.alarms == null ? [] : [var.alarms]
    content {
      enabled                              = alarms.value.enabled
      sns_topic_arn                        = alarms.value.sns_topic_arn
      relay_errors_threshold               = alarms.value.relay_errors_threshold
      iterator_age_threshold_seconds       = alarms.value.iterator_age_threshold_seconds
      oldest_pending_age_threshold_seconds = alarms.value.oldest_pending_age_threshold_seconds
      evaluation_periods                   = alarms.value.evaluation_periods
      treat_missing_data                   = alarms.value.treat_missing_data
    }
  }

  lifecycle {
    precondition {
      condition     = var.event_bus == null || var.topic_arn == null
      error_message = "Set event_bus or topic_arn, not both."
    }
    precondition {
      condition     = var.topic_arn == null || length(var.subscriptions) == 0
      error_message = "subscriptions are EventBridge rules: they need the pipeline to publish to an event bus, not to topic_arn."
    }
  }
}

resource "outbox_subscription" "this" {
  for_each = var.subscriptions

  name          = coalesce(each.value.name, "${var.name}-${each.key}")
  event_bus     = outbox_pipeline.this.target_arn
  sources       = each.value.sources
  detail_types  = each.value.detail_types
  event_pattern = each.value.event_pattern
  tags          = merge(var.tags, each.value.tags)

  queue {
    visibility_timeout_seconds = each.value.queue.visibility_timeout_seconds
    message_retention_seconds  = each.value.queue.message_retention_seconds
    receive_wait_time_seconds  = each.value.queue.receive_wait_time_seconds
    max_receive_count          = each.value.queue.max_receive_count
    kms_master_key_id          = each.value.queue.kms_master_key_id
  }

  dead_letter {
    message_retention_seconds = each.value.dead_letter.message_retention_seconds
  }
}
