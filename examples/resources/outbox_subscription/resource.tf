# The pipeline whose events the subscriptions receive.
resource "outbox_pipeline" "orders" {
  name = "orders"
}

# Billing receives the orders pipeline's OrderPlaced events in its own queue,
# with a dead-letter queue after 5 failed receives.
resource "outbox_subscription" "billing" {
  name         = "billing-orders"
  event_bus    = outbox_pipeline.orders.target_arn
  sources      = ["com.example.orders"]
  detail_types = ["OrderPlaced"]

  queue = {
    visibility_timeout_seconds = 60
    receive_wait_time_seconds  = 20
  }

  # The consumer kit's inbox table, billing-orders-inbox, so that the
  # consumer applies each event once; deletion protection and
  # point-in-time recovery are on by default.
  inbox = {}

  tags = {
    team = "billing"
  }
}

# Fraud checks receive only large orders: a full event pattern on the
# published detail ({"metadata": {...}, "data": {...}}).
resource "outbox_subscription" "fraud" {
  name      = "fraud-large-orders"
  event_bus = outbox_pipeline.orders.target_arn
  event_pattern = jsonencode({
    source        = ["com.example.orders"]
    "detail-type" = ["OrderPlaced"]
    detail = {
      data = {
        total = [{ numeric = [">=", 1000] }]
      }
    }
  })

  queue = {
    max_receive_count = 3
  }

  dead_letter = {
    message_retention_seconds = 1209600
  }
}

output "billing_queue_url" {
  value = outbox_subscription.billing.queue_url
}

# What billing's consumer passes to consumer.NewInbox, and the policy of its
# role.
output "billing_inbox_table" {
  value = outbox_subscription.billing.inbox.table_name
}

output "billing_consumer_policy" {
  value = outbox_subscription.billing.inbox.consumer_policy_json
}
