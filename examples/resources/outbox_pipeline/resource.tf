# A dedicated outbox table publishing to the default EventBridge bus, with
# every setting at its default.
resource "outbox_pipeline" "orders" {
  name = "orders"

  tags = {
    team = "orders"
  }
}

# An outbox in the application's own table: OUTBOX# items sit beside the
# aggregates, published to an SNS topic and deleted once published.
resource "outbox_pipeline" "shop" {
  name = "shop"

  table {
    existing      = true
    name          = aws_dynamodb_table.shop.name
    partition_key = "pk"
    sort_key      = "sk"
  }

  target {
    topic_arn = aws_sns_topic.shop_events.arn
  }

  relay {
    batch_size             = 50
    maximum_retry_attempts = 5
  }

  published {
    action = "delete"
  }

  reconciler {
    schedule_expression = "rate(10 minutes)"
    min_age_seconds     = 600
  }

  dead_letter {
    message_retention_seconds = 345600
  }
}

resource "aws_sns_topic" "shop_events" {
  name = "shop-events"
}

# The pipeline enables the stream, adds the pending index and TTL on the
# adopted table; the AWS provider must not undo them.
resource "aws_dynamodb_table" "shop" {
  name         = "shop"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "pk"
  range_key    = "sk"

  attribute {
    name = "pk"
    type = "S"
  }
  attribute {
    name = "sk"
    type = "S"
  }

  lifecycle {
    ignore_changes = [stream_enabled, stream_view_type, global_secondary_index, attribute, ttl]
  }
}
