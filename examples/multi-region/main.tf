# An orders service in two Regions on one DynamoDB global table: the
# application writes its orders and their events in whichever Region serves
# the request, and each Region's pipeline publishes the events written there
# to that Region's default EventBridge bus, where a consumer of that Region
# subscribes. A Region that falls silent is taken over by the other one.

# One provider configuration per Region. Credentials and endpoint come from
# the environment (AWS_PROFILE or AWS_ACCESS_KEY_ID..., and AWS_ENDPOINT_URL
# for a local stack, which serves every Region).
provider "outbox" {
  alias  = "primary"
  region = var.primary_region

  default_tags {
    tags = {
      service = "orders"
    }
  }
}

provider "outbox" {
  alias  = "secondary"
  region = var.secondary_region

  default_tags {
    tags = {
      service = "orders"
    }
  }
}

locals {
  # The same peers, in the same order, in every Region: the first is the
  # primary, which also publishes events written without an origin.
  multi_region = {
    regions                 = [var.primary_region, var.secondary_region]
    takeover_after_seconds  = var.takeover_after_seconds
    takeover_settle_seconds = var.takeover_settle_seconds
  }

  # Each Region's consumer receives the events published in its Region: those
  # written there, and those of a Region it has taken over.
  subscriptions = {
    billing = {
      sources      = [var.event_source]
      detail_types = ["OrderPlaced", "OrderCancelled"]
      queue = {
        visibility_timeout_seconds = 60
      }
    }
  }
}

# The primary Region's pipeline creates the table, a global table with a
# replica in the secondary Region.
module "orders_primary" {
  source    = "../../modules/outbox-pipeline"
  providers = { outbox = outbox.primary }

  # IAM role names are global: each Region's pipeline has its own name.
  name = "${var.name}-${var.primary_region}"

  table = {
    name            = var.table_name
    replica_regions = [var.secondary_region]
  }

  relay = {
    architecture = var.architecture
  }

  multi_region  = local.multi_region
  subscriptions = local.subscriptions
}

# The secondary Region's pipeline adopts its replica. Naming the table from
# the primary's output makes Terraform create the replica first, and destroy
# this pipeline first.
module "orders_secondary" {
  source    = "../../modules/outbox-pipeline"
  providers = { outbox = outbox.secondary }

  name = "${var.name}-${var.secondary_region}"

  table = {
    existing = true
    name     = module.orders_primary.table_name
  }

  relay = {
    architecture = var.architecture
  }

  multi_region  = local.multi_region
  subscriptions = local.subscriptions
}
