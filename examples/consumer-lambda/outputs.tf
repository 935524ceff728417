output "writer" {
  description = "What the orders service's writer needs (the outbox package's Table)."
  value       = outbox_pipeline.orders.writer
}

output "queue_url" {
  description = "URL of the payments subscription's queue."
  value       = outbox_subscription.payments.queue_url
}

output "queue_arn" {
  description = "ARN of the payments subscription's queue: the event source of the consumer function."
  value       = outbox_subscription.payments.queue_arn
}

output "inbox_table_name" {
  description = "The inbox table: the consumer function's INBOX_TABLE."
  value       = outbox_subscription.payments.inbox.table_name
}

output "consumer_policy_json" {
  description = "The IAM policy the consumer function's role needs to receive the queue and use the inbox."
  value       = outbox_subscription.payments.inbox.consumer_policy_json
}
