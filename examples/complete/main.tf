# An orders service: its orders table holds ORDER items and, beside them,
# OUTBOX# items written in the same transactions. The pipeline creates the
# table, relays the outbox items to the default EventBridge bus, and two
# consumers subscribe to the events they need.

# Region, credentials and endpoint come from the environment (AWS_REGION,
# AWS_PROFILE or AWS_ACCESS_KEY_ID..., and AWS_ENDPOINT_URL for a local stack).
provider "outbox" {
  default_tags {
    tags = {
      service = "orders"
    }
  }
}

module "orders_outbox" {
  source = "../../modules/outbox-pipeline"

  name = var.name

  # The service's own table: orders (PK = ORDER#<id>, SK = ORDER) and their
  # events (PK = ORDER#<id>, SK = OUTBOX#<event id>).
  table = {
    name = var.table_name
  }

  relay = {
    architecture = var.architecture
  }

  subscriptions = {
    billing = {
      sources      = [var.event_source]
      detail_types = ["OrderPlaced"]
    }
    shipping = {
      sources      = [var.event_source]
      detail_types = ["OrderPlaced", "OrderCancelled"]
      queue = {
        visibility_timeout_seconds = 60
      }
    }
  }

  tags = {
    team = "orders"
  }
}
