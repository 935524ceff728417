resource "outbox_pipeline" "this" {
  name = var.name
  # No tags are null, as an import reads them.
  tags          = length(var.tags) > 0 ? var.tags : null
  force_destroy = var.force_destroy

  # A null setting takes the provider's default, as an omitted one does: an
  # imported pipeline then plans no change.
  table         = var.table
  target        = { event_bus = var.event_bus, topic_arn = var.topic_arn, queue_arn = var.queue_arn, envelope = var.envelope }
  relay         = var.relay
  published     = var.published
  ordering      = var.ordering
  pending_index = var.pending_index
  reconciler    = var.reconciler
  dead_letter   = var.dead_letter
  alarms        = var.alarms
  claim_check   = var.claim_check
  multi_region  = var.multi_region

  lifecycle {
    precondition {
      condition     = length(local.targets_set) <= 1
      error_message = "Set at most one of event_bus, topic_arn and queue_arn (${join(", ", local.targets_set)} are set): they choose the pipeline's one target; none publishes to the account's default bus."
    }
    precondition {
      condition     = var.queue_arn == null || length(var.subscriptions) == 0
      error_message = "subscriptions need the pipeline to publish to an event bus or an SNS topic: with queue_arn, that queue is the pipeline's one consumer. Remove subscriptions, or publish to topic_arn and subscribe each consumer to it."
    }
    precondition {
      condition     = var.topic_arn == null || length(local.pattern_subscriptions) == 0
      error_message = "Subscriptions ${join(", ", local.pattern_subscriptions)} set event_pattern, which only an EventBridge rule matches: to the pipeline's topic_arn, a subscription matches with sources and detail_types (its filter policy). Use those, or publish to event_bus."
    }
  }
}

locals {
  # The target settings that are set, by name.
  targets_set = [for k, v in { event_bus = var.event_bus, topic_arn = var.topic_arn, queue_arn = var.queue_arn } : k if v != null]
  # Subscriptions whose match is a full event pattern, by key.
  pattern_subscriptions = [for k, s in var.subscriptions : k if s.event_pattern != null]
  # Subscriptions follow the pipeline's target: rules on its bus, or their
  # queues subscribed to its topic.
  subscribes_to_topic = var.topic_arn != null
}

resource "outbox_subscription" "this" {
  for_each = var.subscriptions

  name          = coalesce(each.value.name, "${var.name}-${each.key}")
  event_bus     = local.subscribes_to_topic ? null : outbox_pipeline.this.target_arn
  topic_arn     = local.subscribes_to_topic ? outbox_pipeline.this.target_arn : null
  sources       = each.value.sources
  detail_types  = each.value.detail_types
  event_pattern = each.value.event_pattern
  tags          = merge(var.tags, each.value.tags)

  queue       = each.value.queue
  dead_letter = each.value.dead_letter
  inbox       = each.value.inbox
}
