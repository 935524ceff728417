# Drain the outbox before every in-place change of the pipeline, such as a
# new target: the apply waits (at most 15 minutes) until no event written
# before it is pending, and stops with an error if some still are. Stop the
# application's writers first if the outbox must stay empty.
locals {
  pipeline = "orders"
}

action "outbox_drain" "orders" {
  config {
    pipeline = local.pipeline
    timeout  = "15m"
  }
}

resource "outbox_pipeline" "orders" {
  name = local.pipeline

  lifecycle {
    action_trigger {
      events  = [before_update]
      actions = [action.outbox_drain.orders]
    }
  }
}

# Or on demand: terraform apply -invoke=action.outbox_drain.orders
