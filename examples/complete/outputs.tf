output "table_name" {
  description = "Name of the orders table."
  value       = module.orders_outbox.table_name
}

output "event_bus_arn" {
  description = "ARN of the event bus the orders' events are published to."
  value       = module.orders_outbox.event_bus_arn
}

output "subscription_queue_urls" {
  description = "URL of each consumer's queue, by subscription."
  value       = module.orders_outbox.subscription_queue_urls
}

output "writer_table" {
  description = "The table settings an outbox writer needs."
  value       = module.orders_outbox.writer_table
}

output "relay_dead_letter_queue_url" {
  description = "URL of the relay's dead-letter queue."
  value       = module.orders_outbox.dead_letter_queue_url
}

output "subscription_dead_letter_queue_urls" {
  description = "URL of each consumer's dead-letter queue, by subscription."
  value       = { for k, s in module.orders_outbox.subscriptions : k => s.dead_letter_queue_url }
}
