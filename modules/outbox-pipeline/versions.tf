terraform {
  required_version = ">= 1.5"

  required_providers {
    outbox = {
      source = "outboxkit/outbox"
      # The provider range this module version is tested with: each release
      # of the module is tested with the provider released alongside it, and
      # admits that provider's compatible releases (CONTRIBUTING.md).
      version = "~> 0.1.0"
    }
  }
}
