# Put the events that failed with AccessDenied in the last two hours back
# to PENDING once the permission is granted, and run the reconciler at once:
#   terraform apply -invoke=action.outbox_requeue.access_denied
# Set dry_run = true first to see which events it selects.
action "outbox_requeue" "access_denied" {
  config {
    pipeline = "orders"
    since    = "2h"
    reason   = "AccessDenied"
    now      = true
  }
}
