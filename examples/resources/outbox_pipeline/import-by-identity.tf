# Terraform 1.12 and later: import by identity. account_id and region are
# optional, and must be the provider's when given.
import {
  to = outbox_pipeline.orders
  identity = {
    name   = "orders"
    region = "eu-west-1"
  }
}
