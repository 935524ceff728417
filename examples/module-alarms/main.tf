# The module's alarms: `{}` creates them with the provider's defaults, and
# any attribute can be set alone.
module "defaults" {
  source = "../../modules/outbox-pipeline"

  name   = "orders"
  alarms = {}
}

module "notified" {
  source = "../../modules/outbox-pipeline"

  name = "payments"
  alarms = {
    sns_topic_arn = "arn:aws:sns:us-east-1:123456789012:alerts"
  }
}

output "orders_writer" {
  description = "What the orders service's writer needs."
  value       = module.defaults.writer_table
}
