# A pipeline that publishes to an SNS FIFO topic, and two consumers whose SQS
# FIFO queues are subscribed to it: each order's events arrive in the order
# they were written (their message group is the item's partition key).
# From the registry, the source is "outboxkit/outbox-pipeline/outbox" with a
# version; here it is the module in this repository.
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

# The topic is the application's, created with it, for instance with
# hashicorp/aws:
#
#   resource "aws_sns_topic" "orders" {
#     name       = "orders.fifo"
#     fifo_topic = true
#   }
variable "topic_arn" {
  description = "ARN of the SNS FIFO topic (its name ends in .fifo) the pipeline publishes to."
  type        = string
}

module "orders_outbox" {
  source = "../../"

  name      = var.name
  topic_arn = var.topic_arn

  subscriptions = {
    # Billing receives only the placed orders: the filter policy of its
    # subscription is built from sources and detail_types.
    billing = {
      sources      = ["com.example.orders"]
      detail_types = ["OrderPlaced"]
    }
    # Shipping receives every event of the orders service.
    shipping = {
      sources = ["com.example.orders"]
      queue = {
        visibility_timeout_seconds = 60
      }
    }
  }
}

output "writer_table" {
  description = "What the application's outbox writer needs."
  value       = module.orders_outbox.writer_table
}

output "subscription_queue_urls" {
  description = "The consumers' FIFO queues (<name>-<key>.fifo), by subscription key."
  value       = module.orders_outbox.subscription_queue_urls
}

output "subscription_topic_subscription_arns" {
  description = "The queues' subscriptions to the topic, by subscription key."
  value       = module.orders_outbox.subscription_topic_subscription_arns
}
