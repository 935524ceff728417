# Skip the FAILED ordered event that holds its ordering key, so that the
# events behind it are published. Without yes = true, the action only
# shows the event and changes nothing:
#   terraform apply -invoke=action.outbox_skip.poison
action "outbox_skip" "poison" {
  config {
    pipeline = "orders"
    event_id = "01JDQ4Z6X0V8W3M5K2R7T9B1CE"
    yes      = true
  }
}
