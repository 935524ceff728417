# Publish the OrderPlaced events of the last day again, to an analytics
# bus, at most 100 a second:
#   terraform apply -invoke=action.outbox_replay.analytics
action "outbox_replay" "analytics" {
  config {
    pipeline    = "orders"
    region      = "eu-west-1"
    since       = "24h"
    detail_type = "OrderPlaced"
    target      = "arn:aws:events:eu-west-1:123456789012:event-bus/analytics"
    rate        = 100
  }
}
