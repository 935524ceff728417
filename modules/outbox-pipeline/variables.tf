################################################################################
# Pipeline
################################################################################

variable "name" {
  description = "Name of the pipeline: the prefix of every component it creates (`<name>-relay` function, `<name>-relay-dlq` queue, `<name>-reconciler`...) and of its subscriptions. Changing it replaces the pipeline."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9_-]{0,52}$", var.name))
    error_message = "The name must be 1 to 53 letters, digits, hyphens and underscores, starting with a letter or digit."
  }
}

variable "tags" {
  description = "Tags of every component that takes tags, subscriptions included (not of an adopted table). Merged with the provider's `default_tags`."
  type        = map(string)
  default     = {}
}

variable "table" {
  description = "The outbox table. By default the pipeline creates a dedicated table named `<name>-outbox`; set `name` to choose its name (the application may keep its own items in it, beside the `OUTBOX#` items), or `existing = true` and `name` to adopt a table the application already has. Key and attribute names default to `PK`, `SK`, `OUTBOX#` and `expiresAt`. `replica_regions` makes a dedicated table a global table (version 2019.11.21, `NEW_AND_OLD_IMAGES` stream) with a replica in each of these Regions besides the provider's own, for a `multi_region` outbox whose other Regions adopt their replica (`existing = true`); not with `existing`, whose replicas are managed with the table. Unset, none."
  type = object({
    existing        = optional(bool, false)
    name            = optional(string)
    partition_key   = optional(string)
    sort_key        = optional(string)
    sort_key_prefix = optional(string)
    ttl_attribute   = optional(string)
    replica_regions = optional(set(string))
  })
  default  = {}
  nullable = false

  validation {
    condition     = !var.table.existing || var.table.name != null
    error_message = "table.name is required with table.existing = true: name the table to adopt."
  }

  validation {
    condition     = !var.table.existing || try(length(var.table.replica_regions), 0) == 0
    error_message = "table.replica_regions is not allowed with table.existing = true: an adopted table's replicas are managed with the table. Remove replica_regions, or let this pipeline create the table."
  }

  validation {
    condition     = try(length(var.table.replica_regions), 1) >= 1
    error_message = "table.replica_regions must list at least 1 Region: name the Regions of the replicas, or leave it unset for a table without replicas."
  }

  validation {
    condition     = alltrue([for r in coalesce(var.table.replica_regions, toset([])) : can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$", r))])
    error_message = "table.replica_regions must hold Region names, such as \"us-west-2\"."
  }

  validation {
    condition     = var.table.name == null || can(regex("^[A-Za-z0-9_.-]{3,255}$", var.table.name))
    error_message = "table.name must be 3 to 255 letters, digits, underscores, hyphens and dots."
  }
}

variable "event_bus" {
  description = "Name or ARN of the EventBridge bus the relay publishes to. `null` (the default) publishes to the account's `default` bus, unless `topic_arn` or `queue_arn` is set. Conflicts with `topic_arn` and `queue_arn`."
  type        = string
  default     = null
}

variable "topic_arn" {
  description = "ARN of an SNS topic, standard or FIFO (`.fifo`), to publish to instead of an EventBridge bus. To a FIFO topic, each message's group is the item's partition key (an aggregate's events arrive in order) and its deduplication id the event id. The `subscriptions` then subscribe their queues to it (FIFO queues to a FIFO topic). Conflicts with `event_bus` and `queue_arn`."
  type        = string
  default     = null

  validation {
    condition     = var.topic_arn == null || can(regex("^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}(\\.fifo)?$", var.topic_arn))
    error_message = "topic_arn must be the ARN of an SNS topic, standard or FIFO, such as \"arn:aws:sns:us-east-1:123456789012:orders\" or \"arn:aws:sns:us-east-1:123456789012:orders.fifo\"."
  }
}

variable "queue_arn" {
  description = "ARN of an SQS queue, standard or FIFO (`.fifo`), to send the events to instead of publishing to a bus or a topic: the message body is the published event's JSON, with `source` and `detail-type` as message attributes; to a FIFO queue, each message's group is the item's partition key and its deduplication id the event id. The queue is the pipeline's one consumer, so `subscriptions` must be empty. Conflicts with `event_bus` and `topic_arn`."
  type        = string
  default     = null

  validation {
    condition     = var.queue_arn == null || can(regex("^arn:aws[a-z-]*:sqs:[a-z0-9-]+:[0-9]{12}:([A-Za-z0-9_-]{1,80}|[A-Za-z0-9_-]{1,75}\\.fifo)$", var.queue_arn))
    error_message = "queue_arn must be the ARN of an SQS queue, standard or FIFO, whose name (with .fifo) is at most 80 characters, such as \"arn:aws:sqs:us-east-1:123456789012:orders\" or \"arn:aws:sqs:us-east-1:123456789012:orders.fifo\"."
  }
}

variable "relay" {
  description = "Settings of the relay function and its event source mapping on the table's stream; unset attributes take the provider's defaults (batch of 100, arm64, ...). See the `relay` object of `outbox_pipeline`."
  type = object({
    batch_size                 = optional(number)
    batching_window_seconds    = optional(number)
    parallelization_factor     = optional(number)
    maximum_retry_attempts     = optional(number)
    maximum_record_age_seconds = optional(number)
    bisect_on_error            = optional(bool)
    memory_size                = optional(number)
    timeout                    = optional(number)
    architecture               = optional(string)
    log_retention_days         = optional(number)
    reserved_concurrency       = optional(number)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.relay.architecture == null || contains(["arm64", "x86_64"], coalesce(var.relay.architecture, "arm64"))
    error_message = "relay.architecture must be arm64 or x86_64."
  }

  validation {
    condition     = var.relay.batch_size == null || (coalesce(var.relay.batch_size, 1) >= 1 && coalesce(var.relay.batch_size, 1) <= 10000)
    error_message = "relay.batch_size must be from 1 to 10000."
  }

  validation {
    condition     = var.relay.parallelization_factor == null || (coalesce(var.relay.parallelization_factor, 1) >= 1 && coalesce(var.relay.parallelization_factor, 1) <= 10)
    error_message = "relay.parallelization_factor must be from 1 to 10."
  }
}

variable "envelope" {
  description = "The format of every event the relay publishes: `\"outbox\"` (the default: `{\"metadata\", \"data\"}`, on SNS and SQS inside an EventBridge-style envelope) or `\"cloudevents\"` (a CloudEvents 1.0 event in structured JSON mode). See the record contract guide."
  type        = string
  default     = "outbox"
  nullable    = false

  validation {
    condition     = contains(["outbox", "cloudevents"], var.envelope)
    error_message = "envelope must be outbox or cloudevents."
  }
}

variable "ordering" {
  description = "Ordered delivery per aggregate: `enabled = true` publishes each ordering key's events in the order of their sequence, none before the one before it; the target must be a FIFO topic or queue (`topic_arn` or `queue_arn` ending in `.fifo`), which the provider checks at plan."
  type = object({
    enabled = optional(bool, false)
  })
  default  = {}
  nullable = false
}

variable "published" {
  description = "What the relay does with an item once its event is published: `action = \"mark\"` (the default: status `PUBLISHED`, expiring after `ttl_days`, 30 by default; 0 keeps it) or `\"delete\"`."
  type = object({
    action   = optional(string)
    ttl_days = optional(number)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.published.action == null || contains(["mark", "delete"], coalesce(var.published.action, "mark"))
    error_message = "published.action must be mark or delete."
  }

  validation {
    condition     = var.published.ttl_days == null || coalesce(var.published.ttl_days, 0) >= 0
    error_message = "published.ttl_days must be 0 (keep forever) or more."
  }
}

variable "pending_index" {
  description = "The sparse, sharded index of pending items that the reconciler queries: its `name` (default `outbox-pending`) and number of `shards` (default 16, each taking up to 1,000 writes a second)."
  type = object({
    name   = optional(string)
    shards = optional(number)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.pending_index.shards == null || (coalesce(var.pending_index.shards, 1) >= 1 && coalesce(var.pending_index.shards, 1) <= 256)
    error_message = "pending_index.shards must be from 1 to 256."
  }
}

variable "reconciler" {
  description = "The scheduled reconciler that republishes pending items older than `min_age_seconds`: `enabled` (default true), `schedule_expression`, `min_age_seconds`, `memory_size` (default 1769 MB, one vCPU, which bounds how fast a run publishes), `timeout`, `log_retention_days`, and under a backlog `max_workers` (default 8 runs at once, 1 for one run per tick) and `max_events_per_second` (default 0: the target kind's, 1000 or 3000 for a standard SQS queue)."
  type = object({
    enabled               = optional(bool)
    schedule_expression   = optional(string)
    min_age_seconds       = optional(number)
    memory_size           = optional(number)
    timeout               = optional(number)
    log_retention_days    = optional(number)
    max_workers           = optional(number)
    max_events_per_second = optional(number)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.reconciler.schedule_expression == null || can(regex("^(rate\\([0-9]+ (minute|minutes|hour|hours|day|days)\\)|cron\\(.+\\))$", coalesce(var.reconciler.schedule_expression, "rate(5 minutes)")))
    error_message = "reconciler.schedule_expression must be rate(...) or cron(...)."
  }
}

variable "dead_letter" {
  description = "The relay's dead-letter queue, which receives the metadata of batches whose retries ran out: `message_retention_seconds` (60 to 1209600) and `kms_master_key_id` (unset: SSE-SQS)."
  type = object({
    message_retention_seconds = optional(number)
    kms_master_key_id         = optional(string)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.dead_letter.message_retention_seconds == null || (coalesce(var.dead_letter.message_retention_seconds, 60) >= 60 && coalesce(var.dead_letter.message_retention_seconds, 60) <= 1209600)
    error_message = "dead_letter.message_retention_seconds must be from 60 to 1209600."
  }
}

variable "claim_check" {
  description = "The claim-check bucket, for events too large to publish whole (over 256 KiB published, up to 10 MiB): the writer (`outbox.WithClaimCheck`) stores their data there with its SHA-256, the relay publishes the reference (`metadata.dataRef`, or a CloudEvent's `dataref`) and the consumer kit fetches it and checks the hash (`consumer.WithObjectStore`). `{}` creates a dedicated bucket, `<name>-claims` (or `bucket_name`), encrypted (SSE-S3, or SSE-KMS with `kms_key_arn`), its public access blocked, TLS only, published objects expiring after `published.ttl_days` (at least 1); `existing = true` with `bucket_name` adopts a bucket instead; `enabled = false` removes the bucket and keeps the settings. Destroy never removes a bucket holding the data of undelivered events, unless `force_destroy`. `null` (the default): no bucket, and the writer refuses events too large to publish. The `claim_check` output holds what the writer and the consumers' roles need. See the `claim_check` object of `outbox_pipeline`."
  type = object({
    enabled     = optional(bool)
    bucket_name = optional(string)
    existing    = optional(bool)
    kms_key_arn = optional(string)
  })
  default = null

  validation {
    condition     = try(var.claim_check.bucket_name, null) == null || (can(regex("^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$", var.claim_check.bucket_name)) && !strcontains(coalesce(try(var.claim_check.bucket_name, null), "-"), "--"))
    error_message = "claim_check.bucket_name must be a bucket name: 3 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit."
  }

  validation {
    condition     = !coalesce(try(var.claim_check.existing, null), false) || try(var.claim_check.bucket_name, null) != null
    error_message = "claim_check.bucket_name is required with claim_check.existing = true: name the bucket to adopt."
  }

  validation {
    condition     = try(var.claim_check.kms_key_arn, null) == null || can(regex("^arn:aws[a-z-]*:kms:", coalesce(try(var.claim_check.kms_key_arn, null), "x")))
    error_message = "claim_check.kms_key_arn must be the ARN of a KMS key (arn:aws:kms:<region>:<account>:key/<id>)."
  }
}

variable "multi_region" {
  description = "Makes the pipeline one of a multi-Region outbox on a DynamoDB global table (multi-Region eventual consistency), one module per Region, each with the same `regions` (at least 2, each once, the same order everywhere; the first is the primary, and the provider's own Region must be one of them) and a `name` of its own (IAM role names are global). Each Region publishes only the events written in it (`outboxOrigin`), and the primary those without origin too. Each reconciler run writes its Region's heartbeat; a Region whose heartbeat is older than `takeover_after_seconds` (default 900; 1 to 86400) is taken over by the next fresh Region of `regions`, which claims it, waits `takeover_settle_seconds` (default 30; at least 1 and below `takeover_after_seconds`) and publishes its pending events until it has been back for `takeover_after_seconds`. The first module creates the global table (`table.replica_regions`), the others adopt their replica (`table.existing`). `null` (the default): a single-Region pipeline. See the `multi_region` object of `outbox_pipeline`."
  type = object({
    regions                 = list(string)
    takeover_after_seconds  = optional(number)
    takeover_settle_seconds = optional(number)
  })
  default = null

  validation {
    condition     = var.multi_region == null || (length(try(var.multi_region.regions, [])) >= 2 && length(distinct(try(var.multi_region.regions, []))) == length(try(var.multi_region.regions, [])))
    error_message = "multi_region.regions must list at least 2 Regions, each once."
  }

  validation {
    condition     = alltrue([for r in try(var.multi_region.regions, []) : can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$", r))])
    error_message = "multi_region.regions must hold Region names, such as \"us-east-1\" and \"eu-west-1\"."
  }

  validation {
    condition     = coalesce(try(var.multi_region.takeover_after_seconds, null), 900) >= 1 && coalesce(try(var.multi_region.takeover_after_seconds, null), 900) <= 86400 && floor(coalesce(try(var.multi_region.takeover_after_seconds, null), 900)) == coalesce(try(var.multi_region.takeover_after_seconds, null), 900)
    error_message = "multi_region.takeover_after_seconds must be a whole number of seconds, 1 to 86400: a Region is taken over once its heartbeat is this old, so keep it a few reconciler intervals."
  }

  validation {
    condition     = coalesce(try(var.multi_region.takeover_settle_seconds, null), 30) >= 1 && coalesce(try(var.multi_region.takeover_settle_seconds, null), 30) < coalesce(try(var.multi_region.takeover_after_seconds, null), 900) && floor(coalesce(try(var.multi_region.takeover_settle_seconds, null), 30)) == coalesce(try(var.multi_region.takeover_settle_seconds, null), 30)
    error_message = "multi_region.takeover_settle_seconds must be a whole number of seconds from 1 to below takeover_after_seconds (default 900): lower it, or raise takeover_after_seconds."
  }
}

################################################################################
# Subscriptions
################################################################################

variable "subscriptions" {
  description = <<-EOT
    Consumers of the pipeline's events, by key, each with its own SQS queue and dead-letter queue. On a bus, each is an EventBridge rule on the pipeline's bus delivering to its queue; when the pipeline publishes to `topic_arn`, each is its queue's subscription to that topic, with raw message delivery and a filter policy on `sources` and `detail_types` (to a FIFO topic, both queues are FIFO queues, `<name>.fifo` and `<name>-dlq.fifo`, receiving each aggregate's events in order). Not with `queue_arn`, whose queue is the one consumer.
    Match with `sources` and/or `detail_types`, or, on a bus only, with a full `event_pattern` (JSON). The subscription (its rule and queue; the dead-letter queue adds `-dlq`) is named `<name>-<key>` unless `name` is set.
    `queue` (`visibility_timeout_seconds`, `message_retention_seconds`, `receive_wait_time_seconds`, `max_receive_count`, `kms_master_key_id`) and `dead_letter` (`message_retention_seconds`) pass settings to the queues; unset attributes take the provider's defaults (30 s visibility, 4 days' retention, 5 receives before dead-lettering, 14 days in the dead-letter queue).
    `inbox` (`deletion_protection`, `point_in_time_recovery`, `kms_key_arn`; or `existing = true` and `name` to adopt a table) gives the subscription the consumer kit's inbox table, `<subscription name>-inbox`, so that a consumer built with the kit applies each event once; unset attributes take the provider's defaults (protection and point-in-time recovery on, the AWS owned key). While its deletion protection is on, destroying the subscription fails. Omitted, there is no inbox.
  EOT
  type = map(object({
    name          = optional(string)
    sources       = optional(list(string))
    detail_types  = optional(list(string))
    event_pattern = optional(string)
    queue = optional(object({
      visibility_timeout_seconds = optional(number)
      message_retention_seconds  = optional(number)
      receive_wait_time_seconds  = optional(number)
      max_receive_count          = optional(number)
      kms_master_key_id          = optional(string)
    }), {})
    dead_letter = optional(object({
      message_retention_seconds = optional(number)
    }), {})
    inbox = optional(object({
      existing               = optional(bool)
      name                   = optional(string)
      deletion_protection    = optional(bool)
      point_in_time_recovery = optional(bool)
      kms_key_arn            = optional(string)
    }))
    tags = optional(map(string), {})
  }))
  default  = {}
  nullable = false

  validation {
    condition     = alltrue([for k in keys(var.subscriptions) : can(regex("^[A-Za-z0-9_-]+$", k))])
    error_message = "Subscription keys must be letters, digits, hyphens and underscores."
  }

  validation {
    condition = alltrue([for s in values(var.subscriptions) :
      (s.event_pattern != null) != (length(coalesce(s.sources, [])) + length(coalesce(s.detail_types, [])) > 0)
    ])
    error_message = "Each subscription needs sources and/or detail_types, or an event_pattern, but not both."
  }

  validation {
    condition     = alltrue([for s in values(var.subscriptions) : s.name == null || can(regex("^[A-Za-z0-9_-]{1,64}$", coalesce(s.name, "x")))])
    error_message = "A subscription's name must be 1 to 64 letters, digits, hyphens and underscores."
  }

  validation {
    condition     = alltrue([for s in values(var.subscriptions) : s.event_pattern == null || can(jsondecode(coalesce(s.event_pattern, "{}")))])
    error_message = "A subscription's event_pattern must be a JSON object (use jsonencode)."
  }
}

################################################################################
# Alarms
################################################################################

variable "force_destroy" {
  description = "Let destroy delete a dedicated table that still holds PENDING or FAILED events (they are lost). Without it, destroy fails with the counts: deliver them first with `outbox drain` and `outbox requeue`. Apply it before destroying."
  type        = bool
  default     = false
  nullable    = false
}

variable "alarms" {
  description = "CloudWatch alarms on the pipeline (`<name>-dlq-not-empty`, `<name>-relay-errors`, `<name>-iterator-age`, `<name>-events-failed`, `<name>-environment-errors` with the reconciler `<name>-oldest-pending-age` (behind), `<name>-stuck` (nothing published) and the reconciler's own `-events-failed` and `-environment-errors`, and with `multi_region` `<name>-ordering-conflicts` (ordered mode, a warning) and `<name>-takeover-unavailable` (with the reconciler)), notifying `sns_topic_arn` when set. On by default (`{}`): every state in which an event waits for a person raises one. `null` creates none; unset thresholds take the provider's defaults: 1 relay error, an iterator age of 300 seconds, an oldest pending age of 900 seconds, 1 evaluation period, missing data not breaching."
  type = object({
    enabled                              = optional(bool, true)
    sns_topic_arn                        = optional(string)
    relay_errors_threshold               = optional(number, 1)
    iterator_age_threshold_seconds       = optional(number, 300)
    oldest_pending_age_threshold_seconds = optional(number, 900)
    evaluation_periods                   = optional(number, 1)
    treat_missing_data                   = optional(string, "notBreaching")
  })
  default = {}

  validation {
    condition     = var.alarms == null || try(var.alarms.sns_topic_arn, null) == null || can(regex("^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_.-]{1,256}$", var.alarms.sns_topic_arn))
    error_message = "alarms.sns_topic_arn must be the ARN of an SNS topic."
  }

  validation {
    condition     = var.alarms == null || contains(["notBreaching", "breaching", "ignore", "missing"], try(var.alarms.treat_missing_data, "notBreaching"))
    error_message = "alarms.treat_missing_data must be notBreaching, breaching, ignore or missing."
  }

  validation {
    condition     = var.alarms == null || (try(var.alarms.iterator_age_threshold_seconds, 300) >= 1 && try(var.alarms.iterator_age_threshold_seconds, 300) <= 86400)
    error_message = "alarms.iterator_age_threshold_seconds must be from 1 to 86400 (a stream keeps records 24 hours)."
  }
}
