resource "outbox_pipeline" "this" {
  name = var.name
  # No tags are null, as an import reads them.
  tags          = length(var.tags) > 0 ? var.tags : null
  force_destroy = var.force_destroy

  # A null setting takes the provider's default, as an omitted one does: an
  # imported pipeline then plans no change.
  table         = var.table
  target        = { event_bus = var.event_bus, topic_arn = var.topic_arn }
  relay         = var.relay
  published     = var.published
  pending_index = var.pending_index
  reconciler    = var.reconciler
  dead_letter   = var.dead_letter
  alarms        = var.alarms

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

  queue       = each.value.queue
  dead_letter = each.value.dead_letter
}
