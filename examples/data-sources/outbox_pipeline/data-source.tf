# An application stack, kept in another state than the pipeline, reads
# what its writer needs by the pipeline's name.
data "outbox_pipeline" "orders" {
  name = "orders"
}

output "outbox_table" {
  description = "The settings of the orders service's outbox writer."
  value       = data.outbox_pipeline.orders.writer
}

output "orders_bus_arn" {
  description = "The bus the orders pipeline publishes to."
  value       = data.outbox_pipeline.orders.target_arn
}
