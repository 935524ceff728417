# The smallest use of the module: a pipeline on a table of its own, with one
# consumer. From the registry, the source is "outboxkit/outbox-pipeline/outbox"
# with a version; here it is the module in this repository.
terraform {
  required_version = ">= 1.5"

  required_providers {
    outbox = {
      source  = "outboxkit/outbox"
      version = "~> 0.1.0"
    }
  }
}

variable "name" {
  description = "Name of the pipeline and prefix of its components."
  type        = string
  default     = "orders"
}

module "orders_outbox" {
  source = "../../"

  name = var.name

  subscriptions = {
    billing = {
      sources      = ["com.example.orders"]
      detail_types = ["OrderPlaced"]
    }
  }
}

output "writer_table" {
  description = "What the application's outbox writer needs."
  value       = module.orders_outbox.writer_table
}

output "subscription_queue_urls" {
  description = "The consumers' queues, by subscription key."
  value       = module.orders_outbox.subscription_queue_urls
}
