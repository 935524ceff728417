# Settle the dead-letter queue after an outage of the target: run the
# reconciler, then delete each batch's message once its events are
# published:
#   terraform apply -invoke=action.outbox_redrive.orders
action "outbox_redrive" "orders" {
  config {
    pipeline = "orders"
  }
}
