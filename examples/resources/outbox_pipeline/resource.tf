# A dedicated outbox table publishing to the default EventBridge bus, with
# every setting at its default.
resource "outbox_pipeline" "orders" {
  name = "orders"

  tags = {
    team = "orders"
  }
}

# An outbox in the application's own table: OUTBOX# items sit beside the
# aggregates, published to an SNS topic and deleted once published. The
# pipeline enables the table's stream and adds the pending index and TTL;
# if the table is managed with hashicorp/aws, see "Adopting an existing
# table" below for the lifecycle settings that keep the two from fighting.
variable "shop_table_name" {
  type        = string
  description = "Name of the application's existing DynamoDB table."
  default     = "shop"
}

variable "shop_events_topic_arn" {
  type        = string
  description = "ARN of the SNS topic the shop's events are published to."
  default     = "arn:aws:sns:eu-west-1:123456789012:shop-events"
}

variable "alerts_topic_arn" {
  type        = string
  description = "ARN of the SNS topic that receives the pipeline's alarms."
  default     = "arn:aws:sns:eu-west-1:123456789012:alerts"
}

resource "outbox_pipeline" "shop" {
  name = "shop"

  table = {
    existing      = true
    name          = var.shop_table_name
    partition_key = "pk"
    sort_key      = "sk"
  }

  target = {
    topic_arn = var.shop_events_topic_arn
  }

  relay = {
    batch_size             = 50
    maximum_retry_attempts = 5
  }

  published = {
    action = "delete"
  }

  reconciler = {
    schedule_expression = "rate(10 minutes)"
    min_age_seconds     = 600
  }

  dead_letter = {
    message_retention_seconds = 345600
  }

  alarms = {
    sns_topic_arn = var.alerts_topic_arn
  }
}

# Events sent to an SQS FIFO queue, in ordered mode: each message's group is
# the event's ordering key (the writer's Event.OrderingKey, here the order
# id), so one order's events arrive in the order written, and its
# deduplication id is the event id, so a copy sent again within five minutes
# is dropped. An event written without an ordering key is grouped by the
# item's partition key, which on this dedicated table is the event's own:
# such events keep no order among them.
variable "billing_queue_arn" {
  type        = string
  description = "ARN of the billing service's SQS FIFO queue."
  default     = "arn:aws:sqs:eu-west-1:123456789012:billing.fifo"
}

resource "outbox_pipeline" "billing" {
  name = "billing"

  target = {
    queue_arn = var.billing_queue_arn
  }

  ordering = {
    enabled = true
  }
}
