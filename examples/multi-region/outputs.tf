output "table_name" {
  description = "Name of the orders table, the same in every Region."
  value       = module.orders_primary.table_name
}

output "regions" {
  description = "The peers, the primary first."
  value       = local.multi_region.regions
}

output "pipelines" {
  description = "Each Region's pipeline, by Region: its name, its replica's ARN, the bus it publishes to, its relay's event source mapping and its reconciler's schedule."
  value = {
    for region, m in {
      (var.primary_region)   = module.orders_primary
      (var.secondary_region) = module.orders_secondary
      } : region => {
      name                      = m.pipeline_name
      table_arn                 = m.table_arn
      event_bus_arn             = m.event_bus_arn
      event_source_mapping_uuid = m.event_source_mapping_uuid
      schedule_arn              = m.schedule_arn
    }
  }
}

output "subscription_queue_urls" {
  description = "URL of each Region's consumer queue, by Region and subscription."
  value = {
    (var.primary_region)   = module.orders_primary.subscription_queue_urls
    (var.secondary_region) = module.orders_secondary.subscription_queue_urls
  }
}

output "writer_table" {
  description = "The table settings an outbox writer needs, the same in every Region (the writer stamps each event with its client's Region)."
  value       = module.orders_primary.writer_table
}
