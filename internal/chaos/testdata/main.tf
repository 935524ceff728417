# The pipeline under test and a consumer's subscription on its bus, tuned
# for the chaos suite: the x86_64 relay (no emulation), batches that bisect
# (sized by the suite for its event count), few retries before the
# dead-letter queue, and a reconciler that republishes anything pending for
# more than a few seconds, scheduled no more often than its timeout. The
# target is the account's default bus, or the SNS topic topic_arn names (the
# suite creates it): the consumer's queue then subscribes to the topic, a
# FIFO queue with a FIFO dead-letter queue to a FIFO topic, in ordered mode
# when ordering_enabled is set. Region, credentials and endpoint come from
# the environment.

terraform {
  required_version = ">= 1.5"

  required_providers {
    outbox = {
      source  = "outboxkit/outbox"
      version = ">= 0.1.0"
    }
  }
}

variable "name" {
  description = "Name of the pipeline and prefix of its components."
  type        = string
  default     = "chaos"
}

variable "source_name" {
  description = "Source of the events the writers publish."
  type        = string
  default     = "com.example.chaos"
}

variable "published_action" {
  description = "What the relay does with a published item: mark or delete."
  type        = string
  default     = "mark"
}

variable "relay_batch_size" {
  description = "Records per relay invocation."
  type        = number
  default     = 25
}

variable "relay_parallelization_factor" {
  description = "Concurrent relay invocations per stream shard."
  type        = number
  default     = 1
}

variable "relay_timeout" {
  description = "Relay function timeout, in seconds."
  type        = number
  default     = 30
}

variable "reconciler_timeout" {
  description = "Reconciler function timeout, in seconds."
  type        = number
  default     = 60
}

variable "reconciler_min_age_seconds" {
  description = "Age a pending item reaches before the reconciler republishes it."
  type        = number
  default     = 10
}

variable "sort_key_prefix" {
  description = "Prefix of the outbox items' sort keys (the record contract); the suite changes it mid-run."
  type        = string
  default     = "OUTBOX#"
}

variable "pending_shards" {
  description = "Shards of the pending index; the suite lowers it mid-run."
  type        = number
  default     = 16
}

variable "topic_arn" {
  description = "SNS topic the pipeline publishes to and the consumer's queue subscribes to; null for the default EventBridge bus."
  type        = string
  default     = null
}

variable "claim_check" {
  description = "Provision the claim-check bucket (the claim-check run)."
  type        = bool
  default     = false
}

variable "ordering_enabled" {
  description = "Ordered mode: each ordering key's events published in sequence (a FIFO topic_arn only)."
  type        = bool
  default     = false
}

provider "outbox" {}

resource "outbox_pipeline" "chaos" {
  name = var.name
  # The suite injects poison events, which stay FAILED by design: the
  # teardown deletes them with the table.
  force_destroy = true

  table = {
    sort_key_prefix = var.sort_key_prefix
  }

  pending_index = {
    shards = var.pending_shards
  }

  target = {
    topic_arn = var.topic_arn
  }

  relay = {
    architecture           = "x86_64"
    batch_size             = var.relay_batch_size
    parallelization_factor = var.relay_parallelization_factor
    maximum_retry_attempts = 2
    bisect_on_error        = true
    timeout                = var.relay_timeout
  }

  published = {
    action = var.published_action
  }

  ordering = {
    enabled = var.ordering_enabled
  }

  reconciler = {
    schedule_expression = "rate(1 minute)"
    min_age_seconds     = var.reconciler_min_age_seconds
    timeout             = var.reconciler_timeout
  }

  claim_check = var.claim_check ? {} : null
}

resource "outbox_subscription" "consumer" {
  name      = "${var.name}-consumer"
  event_bus = var.topic_arn == null ? outbox_pipeline.chaos.target_arn : null
  topic_arn = var.topic_arn == null ? null : outbox_pipeline.chaos.target_arn
  sources   = [var.source_name]

  queue = {
    visibility_timeout_seconds = 30
    max_receive_count          = 10
  }
}

output "pipeline" {
  value = outbox_pipeline.chaos
}

output "consumer_queue_url" {
  value = outbox_subscription.consumer.queue_url
}
