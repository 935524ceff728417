terraform {
  required_version = ">= 1.5"

  required_providers {
    outbox = {
      source  = "outboxkit/outbox"
      version = ">= 0.1.0"
    }
  }
}
