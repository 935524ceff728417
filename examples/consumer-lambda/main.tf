# An orders service's pipeline, and a payments consumer that applies each
# OrderPlaced event once: its subscription has an inbox, the table of the
# consumer kit, and gives the consumer's Lambda function everything it
# needs: the queue to read, the inbox table, and the IAM policy to attach.
# The function itself (main.go) is deployed with hashicorp/aws, as the
# README shows.

# Region, credentials and endpoint come from the environment (AWS_REGION,
# AWS_PROFILE or AWS_ACCESS_KEY_ID..., and AWS_ENDPOINT_URL for a local stack).
provider "outbox" {}

resource "outbox_pipeline" "orders" {
  name = var.name

  relay = {
    architecture = var.architecture
  }
}

resource "outbox_subscription" "payments" {
  name         = "${var.name}-payments"
  event_bus    = outbox_pipeline.orders.target_arn
  sources      = [var.event_source]
  detail_types = ["OrderPlaced"]

  queue = {
    # Longer than the function's timeout, as Lambda requires of an SQS
    # event source. The kit's lease (90 s by default) must end before the
    # last receive: the function's timeout < the lease <
    # (max_receive_count - 1) x visibility_timeout_seconds = 4 x 60 s.
    visibility_timeout_seconds = 60
  }

  # The consumer kit's inbox table, <name>-inbox: one entry per event id.
  inbox = {
    # On by default: destroying the subscription fails while it is on, so
    # that the record of the events applied is never lost by accident.
    deletion_protection = var.inbox_deletion_protection
  }
}
