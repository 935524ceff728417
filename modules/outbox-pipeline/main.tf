locals {
  # A block is written only when it sets something, as a configuration
  # that keeps the provider's defaults leaves it out: an imported pipeline
  # then plans no change.
  set = {
    table         = var.table.existing || anytrue([for k, v in var.table : v != null if k != "existing"])
    relay         = anytrue([for v in values(var.relay) : v != null])
    published     = anytrue([for v in values(var.published) : v != null])
    pending_index = anytrue([for v in values(var.pending_index) : v != null])
    reconciler    = anytrue([for v in values(var.reconciler) : v != null])
    dead_letter   = anytrue([for v in values(var.dead_letter) : v != null])
  }

  # The pipeline publishes to an EventBridge bus unless a topic is given.
  target = var.event_bus != null || var.topic_arn != null ? [{
    event_bus = var.event_bus
    topic_arn = var.topic_arn
  }] : []
}

resource "outbox_pipeline" "this" {
  name = var.name
  # No tags are null, as an import reads them.
  tags          = length(var.tags) > 0 ? var.tags : null
  force_destroy = var.force_destroy

  dynamic "table" {
    for_each = local.set.table ? [var.table] : []
    content {
      existing        = table.value.existing
      name            = table.value.name
      partition_key   = table.value.partition_key
      sort_key        = table.value.sort_key
      sort_key_prefix = table.value.sort_key_prefix
      ttl_attribute   = table.value.ttl_attribute
    }
  }

  dynamic "target" {
    for_each = local.target
    content {
      event_bus = target.value.event_bus
      topic_arn = target.value.topic_arn
    }
  }

  dynamic "relay" {
    for_each = local.set.relay ? [var.relay] : []
    content {
      batch_size                 = relay.value.batch_size
      batching_window_seconds    = relay.value.batching_window_seconds
      parallelization_factor     = relay.value.parallelization_factor
      maximum_retry_attempts     = relay.value.maximum_retry_attempts
      maximum_record_age_seconds = relay.value.maximum_record_age_seconds
      bisect_on_error            = relay.value.bisect_on_error
      memory_size                = relay.value.memory_size
      timeout                    = relay.value.timeout
      architecture               = relay.value.architecture
      log_retention_days         = relay.value.log_retention_days
      reserved_concurrency       = relay.value.reserved_concurrency
    }
  }

  dynamic "published" {
    for_each = local.set.published ? [var.published] : []
    content {
      action   = published.value.action
      ttl_days = published.value.ttl_days
    }
  }

  dynamic "pending_index" {
    for_each = local.set.pending_index ? [var.pending_index] : []
    content {
      name   = pending_index.value.name
      shards = pending_index.value.shards
    }
  }

  dynamic "reconciler" {
    for_each = local.set.reconciler ? [var.reconciler] : []
    content {
      enabled             = reconciler.value.enabled
      schedule_expression = reconciler.value.schedule_expression
      min_age_seconds     = reconciler.value.min_age_seconds
      memory_size         = reconciler.value.memory_size
      timeout             = reconciler.value.timeout
      log_retention_days  = reconciler.value.log_retention_days
    }
  }

  dynamic "dead_letter" {
    for_each = local.set.dead_letter ? [var.dead_letter] : []
    content {
      message_retention_seconds = dead_letter.value.message_retention_seconds
      kms_master_key_id         = dead_letter.value.kms_master_key_id
    }
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
