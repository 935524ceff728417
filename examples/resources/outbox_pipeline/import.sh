# A pipeline is imported by its name.
terraform import outbox_pipeline.orders orders
